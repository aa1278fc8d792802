"""AIOKafkaShareConsumer's argument checks and use before start (no broker)."""

from __future__ import annotations

import pytest

from aiokafka import AIOKafkaShareConsumer
from aiokafka.errors import IllegalStateError
from aiokafka.share import ShareConsumerRecord


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="group_id"):
        AIOKafkaShareConsumer("t", group_id="")
    with pytest.raises(ValueError, match="acknowledgement_mode"):
        AIOKafkaShareConsumer("t", group_id="g", acknowledgement_mode="auto")
    with pytest.raises(ValueError, match="max_poll_records"):
        AIOKafkaShareConsumer("t", group_id="g", max_poll_records=0)
    with pytest.raises(ValueError, match="share_acquire_mode"):
        AIOKafkaShareConsumer("t", group_id="g", share_acquire_mode="record-limit")
    with pytest.raises(TypeError):
        AIOKafkaShareConsumer("t", group_id="g", no_such_option=1)


async def test_use_before_start() -> None:
    c = AIOKafkaShareConsumer("t", group_id="g", bootstrap_servers="localhost:1")
    assert c.subscription() == frozenset({"t"}) and c.assignment() == frozenset()
    with pytest.raises(IllegalStateError):
        await c.getmany()
    record: ShareConsumerRecord[bytes, bytes] = ShareConsumerRecord(
        "t", 0, 5, 0, 0, None, b"v", None, -1, 1, (), None, 2
    )
    with pytest.raises(ValueError, match="accept"):
        c.acknowledge(record, "done")
    with pytest.raises(IllegalStateError):
        c.acknowledge(record, "accept")  # never delivered by this consumer
    await c.stop()  # a consumer never started stops quietly
