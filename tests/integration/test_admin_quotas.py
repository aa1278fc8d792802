"""Client quotas proven by the broker's behaviour, and validate_only proven a no-op.

A ``producer_byte_rate`` quota set with :meth:`alter_client_quotas` for one client id
makes the broker throttle that client: its ProduceResponse carries a
``throttle_time_ms`` (KIP-219) and the broker holds back the connection's next answer
for that long, while another client id producing the same bytes is not throttled.

The Produce requests are built by hand (one batch, acks=1) so the test reads the
response's ``throttle_time_ms``, which the producer does not expose.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable

from aiokafka.admin import (
    AIOKafkaAdminClient,
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilterComponent,
    ClientQuotaOp,
)
from aiokafka.cluster import AIOKafkaClient
from aiokafka.protocol._gen.produce import (
    PartitionProduceData,
    ProduceRequest,
    TopicProduceData,
)
from aiokafka.record import DefaultRecordBatchBuilder
from tools.kafka.rig import KafkaCluster

SETTLE = 10.0
# With a 1024 B/s quota the broker measures the rate over its whole quota window
# (quota.window.num 11 x 1 s, so at least 10 s): 12 KiB in one request is ~1.2 KiB/s,
# a throttle of about (1.2 - 1) / 1 * 10 s = 2 s. Enough to see, short enough to wait.
QUOTA = 1024.0
PAYLOAD = b"q" * 12 * 1024


def _produce_request(topic: str, payload: bytes) -> ProduceRequest:
    builder = DefaultRecordBatchBuilder(batch_size=len(payload) + 1024)
    assert builder.append(0, None, None, payload) is not None
    return ProduceRequest(
        transactional_id=None,
        acks=1,
        timeout_ms=10000,
        topic_data=[
            TopicProduceData(
                name=topic, partition_data=[PartitionProduceData(index=0, records=builder.build())]
            )
        ],
    )


async def _produce(client: AIOKafkaClient, node: int, topic: str, payload: bytes) -> int:
    """Produce one record; return the response's throttle_time_ms."""
    response = await client.send(node, _produce_request(topic, payload))
    ((part,),) = [t.partition_responses for t in response.responses]
    assert part.error_code == 0, f"produce failed with error {part.error_code}"
    throttle: int = response.throttle_time_ms
    return throttle


async def _described(
    admin: AIOKafkaAdminClient, client_id: str
) -> dict[ClientQuotaEntity, dict[str, float]]:
    return await admin.describe_client_quotas(
        [ClientQuotaFilterComponent.of_entity("client-id", client_id)], strict=True
    )


async def test_producer_byte_rate_quota_throttles_that_client(
    admin: AIOKafkaAdminClient, kafka: KafkaCluster, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    node = kafka.nodes[0].node_id
    limited_id = f"quota-limited-{uuid.uuid4().hex[:8]}"
    free_id = f"quota-free-{uuid.uuid4().hex[:8]}"
    entity = ClientQuotaEntity.of({"client-id": limited_id})
    await admin.alter_client_quotas(
        [ClientQuotaAlteration(entity, [ClientQuotaOp("producer_byte_rate", QUOTA)])]
    )
    limited = AIOKafkaClient(
        bootstrap_servers=kafka.bootstrap_servers, client_id=limited_id, request_timeout_ms=20000
    )
    free = AIOKafkaClient(
        bootstrap_servers=kafka.bootstrap_servers, client_id=free_id, request_timeout_ms=20000
    )
    try:
        deadline = time.monotonic() + SETTLE
        while await _described(admin, limited_id) != {entity: {"producer_byte_rate": QUOTA}}:
            assert time.monotonic() < deadline, "the quota never became visible"
            await asyncio.sleep(0.1)
        await limited.start()
        await free.start()

        # The quota managers pick the quota up with the same metadata update that
        # DescribeClientQuotas reads, or just after; an unthrottled answer does not
        # hold the connection back, so retrying on it is cheap.
        throttle = 0
        while throttle == 0 and time.monotonic() < deadline:
            throttle = await _produce(limited, node, topic, PAYLOAD)
        assert throttle > 0, "the broker never throttled the limited client id"
        # Bounded by the broker: at most the quota window (11 s).
        assert throttle <= 11_000

        # The broker mutes the throttled connection for throttle_time_ms after that
        # answer: the next request on it is answered only afterwards.
        start = time.monotonic()
        await _produce(limited, node, topic, b"x")
        held = time.monotonic() - start
        assert held >= 0.5 * throttle / 1000, (throttle, held)

        # Another client id sending the same bytes meanwhile is not throttled.
        assert await _produce(free, node, topic, PAYLOAD) == 0
    finally:
        await limited.close()
        await free.close()
        await admin.alter_client_quotas(
            [ClientQuotaAlteration(entity, [ClientQuotaOp("producer_byte_rate", None)])]
        )
    deadline = time.monotonic() + SETTLE
    while await _described(admin, limited_id):
        assert time.monotonic() < deadline, "the quota was never removed"
        await asyncio.sleep(0.1)


async def test_alter_client_quotas_validate_only_changes_nothing(
    admin: AIOKafkaAdminClient,
) -> None:
    client_id = f"quota-validate-{uuid.uuid4().hex[:8]}"
    entity = ClientQuotaEntity.of({"client-id": client_id})
    marker = ClientQuotaEntity.of({"client-id": client_id + "-marker"})
    try:
        await admin.alter_client_quotas(
            [ClientQuotaAlteration(entity, [ClientQuotaOp("producer_byte_rate", 4096)])]
        )
        deadline = time.monotonic() + SETTLE
        while not (before := await _described(admin, client_id)):
            assert time.monotonic() < deadline, "the quota never became visible"
            await asyncio.sleep(0.1)
        assert before == {entity: {"producer_byte_rate": 4096.0}}

        # Validated only: a new value, a removal and a new key on the entity, and a
        # quota on another entity.
        await admin.alter_client_quotas(
            [
                ClientQuotaAlteration(
                    entity,
                    [
                        ClientQuotaOp("producer_byte_rate", None),
                        ClientQuotaOp("consumer_byte_rate", 1),
                    ],
                ),
                ClientQuotaAlteration(marker, [ClientQuotaOp("request_percentage", 10)]),
            ],
            validate_only=True,
        )
        # Ordering proof: a real change made afterwards becomes visible; the metadata
        # log is ordered, so the validated ones would be visible by then too.
        await admin.alter_client_quotas(
            [ClientQuotaAlteration(marker, [ClientQuotaOp("consumer_byte_rate", 2048)])]
        )
        deadline = time.monotonic() + SETTLE
        while not (seen := await _described(admin, client_id + "-marker")):
            assert time.monotonic() < deadline, "the real change never became visible"
            await asyncio.sleep(0.1)
        assert seen == {marker: {"consumer_byte_rate": 2048.0}}
        assert await _described(admin, client_id) == before
    finally:
        await admin.alter_client_quotas(
            [
                ClientQuotaAlteration(entity, [ClientQuotaOp("producer_byte_rate", None)]),
                ClientQuotaAlteration(marker, [ClientQuotaOp("consumer_byte_rate", None)]),
            ]
        )
