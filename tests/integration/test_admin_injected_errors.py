"""NOT_CONTROLLER on CreateTopics is retried transparently (real broker, injected error).

librdkafka's mock cluster, the peer that injects request errors elsewhere, does not
implement CreateTopics (it advertises no version of API 19), so the error comes from
:class:`~tests.support.inject_relay.InjectingRelay` in front of the real broker: it
answers the next CreateTopics requests itself with NOT_CONTROLLER, as a broker that is
not (or no longer) the controller does, without creating anything.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import NotControllerError
from aiokafka.protocol._gen.create_topics import CreateTopicsRequest
from tests.support.inject_relay import InjectingRelay
from tools.kafka.rig import KafkaCluster

NOT_CONTROLLER = 41
CREATE_TOPICS = CreateTopicsRequest.API_KEY


async def test_create_topics_retries_not_controller(kafka: KafkaCluster) -> None:
    node = kafka.nodes[0]
    name = f"admin-notctl-{uuid.uuid4().hex[:8]}"
    async with InjectingRelay(node.host, node.ports["PLAINTEXT"]) as relay:
        async with AIOKafkaAdminClient(
            bootstrap_servers=relay.bootstrap_servers,
            request_timeout_ms=10000,
            retry_backoff_ms=50,
        ) as admin:
            relay.fail_next(CREATE_TOPICS, NOT_CONTROLLER, count=2)
            created = await admin.create_topics([NewTopic(name, 2, 1)])
            assert created[name].num_partitions == 2
            # Both injected answers were seen, and the third attempt reached the broker
            # (the relay advertised itself, so every connection went through it).
            assert relay.injected == {CREATE_TOPICS: 2}
            assert relay.forwarded[CREATE_TOPICS] == 1
            # Second path: the broker's own metadata has the topic.
            await asyncio.to_thread(kafka.wait_topic, name, 2, 30.0)
            await admin.delete_topics([name])


async def test_not_controller_until_the_deadline_is_raised(kafka: KafkaCluster) -> None:
    """The control: the injection is real and not retried forever."""
    node = kafka.nodes[0]
    name = f"admin-notctl-{uuid.uuid4().hex[:8]}"
    async with InjectingRelay(node.host, node.ports["PLAINTEXT"]) as relay:
        async with AIOKafkaAdminClient(
            bootstrap_servers=relay.bootstrap_servers,
            request_timeout_ms=1500,
            retry_backoff_ms=50,
        ) as admin:
            relay.fail_next(CREATE_TOPICS, NOT_CONTROLLER, count=10_000)
            with pytest.raises(NotControllerError):
                await admin.create_topics([NewTopic(name, 1, 1)], raise_errors=True)
            assert relay.injected[CREATE_TOPICS] >= 2
            assert CREATE_TOPICS not in relay.forwarded
