"""The admin client."""

from aiokafka.admin import AIOKafkaAdminClient, NewTopic


async def main() -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers="localhost:9092", request_timeout_ms=30000)
    await admin.start()
    try:
        await admin.create_topics([NewTopic("events", num_partitions=3, replication_factor=1)])
        names: list[str] = await admin.list_topics()
        print(names)
        await admin.delete_topics(["events"])
    finally:
        await admin.close()
