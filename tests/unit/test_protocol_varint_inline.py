"""The generated encoders write a compact length of one or two bytes inline and call
``write_unsigned_varint`` only for longer ones: every length around both limits must
come out as that function writes it (and decode back)."""

from __future__ import annotations

import pytest

from aiokafka.protocol import messages as m
from aiokafka.protocol.primitives import encode_unsigned_varint

LENGTHS = [0, 1, 126, 127, 128, 129, 255, 256, 16382, 16383, 16384, 16385, 70000]


@pytest.mark.parametrize("n", LENGTHS)
def test_compact_string_and_bytes_prefixes(n: int) -> None:
    txn = "t" * n
    records = b"r" * n
    request = m.ProduceRequest(
        transactional_id=txn,
        acks=1,
        timeout_ms=30000,
        topic_data=[
            m.TopicProduceData(
                name="topic",
                partition_data=[m.PartitionProduceData(index=3, records=records)],
            )
        ],
    )
    body = request.encode(9)
    # transactional_id is the body's first field: compact string, length + 1.
    head = encode_unsigned_varint(n + 1)
    assert body[: len(head) + n] == head + txn.encode()
    # records is the last field before two empty tagged-field sections (partition,
    # topic) and the request's own: compact bytes, length + 1.
    tail = encode_unsigned_varint(n + 1) + records + b"\x00\x00\x00"
    assert body.endswith(tail)
    decoded = m.ProduceRequest.decode(body, 9)
    assert decoded.transactional_id == txn
    assert decoded.topic_data[0].partition_data[0].records == records


@pytest.mark.parametrize("count", [126, 127, 128, 200])
def test_compact_array_count_prefix(count: int) -> None:
    partitions = [m.PartitionProduceData(index=i, records=None) for i in range(count)]
    request = m.ProduceRequest(
        transactional_id=None,
        acks=1,
        timeout_ms=1,
        topic_data=[m.TopicProduceData(name="t", partition_data=partitions)],
    )
    body = request.encode(9)
    # null id (1) + acks/timeout (6) + topics count (1) + name "t" (2): then the count.
    prefix = encode_unsigned_varint(count + 1)
    assert body[10 : 10 + len(prefix)] == prefix
    decoded = m.ProduceRequest.decode(body, 9)
    assert [p.index for p in decoded.topic_data[0].partition_data] == list(range(count))
