"""Manage topics with the admin client: create, describe, change a config, read a
group's committed offsets, delete.

Run it::

    python examples/admin_topics.py --bootstrap localhost:9092 --topic audit-log
"""

from __future__ import annotations

import argparse
import asyncio

from aiokafka.admin import (
    AIOKafkaAdminClient,
    AlterConfigOp,
    ConfigResource,
    ConfigResourceType,
    NewTopic,
)
from aiokafka.errors import TopicAlreadyExistsError


async def manage(bootstrap: str, topic: str, group: str | None) -> None:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        # Per topic, as in aiokafka: a failure is returned, not raised, unless
        # raise_errors=True.
        created = await admin.create_topics(
            [
                NewTopic(
                    topic,
                    num_partitions=3,
                    replication_factor=1,
                    topic_configs={"retention.ms": str(7 * 24 * 3600 * 1000)},
                )
            ]
        )
        for result in created.values():
            if isinstance(result.error, TopicAlreadyExistsError):
                print(f"{topic} exists already")
            elif result.error is not None:
                raise result.error

        # The controller has accepted the topic; wait until the brokers list it and
        # every partition has a leader, or describing it may not find it yet.
        await admin.wait_for_topics([topic], timeout_ms=20000)
        [description] = await admin.describe_topics([topic], raise_errors=True)
        for partition in description.partitions:
            print(
                f"{topic}[{partition.partition}] leader {partition.leader} "
                f"replicas {partition.replicas}"
            )

        # Change one config, leave the others as they are (KIP-339).
        resource = ConfigResource(ConfigResourceType.TOPIC, topic)
        await admin.incremental_alter_configs(
            {resource: [AlterConfigOp("cleanup.policy", "compact")]}
        )
        # The controller has committed the change when the call returns, but each
        # broker applies it from the metadata log a moment later: a describe sent at
        # once can still see the old value, so read it back until it shows (bounded).
        wanted = ConfigResource(ConfigResourceType.TOPIC, topic, {"cleanup.policy": None})
        for _ in range(50):
            [configs] = await admin.describe_configs([wanted], raise_errors=True)
            if configs.configs["cleanup.policy"].value == "compact":
                break
            await asyncio.sleep(0.1)
        print(f"cleanup.policy = {configs.configs['cleanup.policy'].value}")

        if group is not None:
            offsets = await admin.list_consumer_group_offsets(group)
            for tp, committed in sorted(offsets.items()):
                print(f"group {group} committed {tp.topic}[{tp.partition}] at {committed.offset}")

        await admin.delete_topics([topic])
        print(f"deleted {topic}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="localhost:9092")
    parser.add_argument("--topic", default="audit-log")
    parser.add_argument("--group", help="also show this group's committed offsets")
    args = parser.parse_args()
    asyncio.run(manage(args.bootstrap, args.topic, args.group))


if __name__ == "__main__":
    main()
