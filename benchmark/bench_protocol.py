"""Encode/decode cost of the protocol codec's hot paths, in microseconds per operation.

Run: ``python benchmark/bench_protocol.py``. Measures a Fetch response (several topics
and partitions, each with a records blob) and a Produce request, at a non-flexible and
a flexible version, plus a Metadata response of a mid-sized cluster.
"""

from __future__ import annotations

import argparse
import timeit
import uuid
from collections.abc import Callable
from functools import partial

from aiokafka.protocol.messages import (
    FetchableTopicResponse,
    FetchResponse,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
    PartitionProduceData,
    ProduceRequest,
    TopicProduceData,
)
from aiokafka.protocol.messages import FetchResponsePartitionData as FetchPartition

RECORDS = bytes(range(256)) * 64  # a 16 KiB stand-in for a record batch blob


def fetch_response(topics: int, partitions: int) -> FetchResponse:
    return FetchResponse(
        throttle_time_ms=0,
        session_id=17,
        responses=[
            FetchableTopicResponse(
                topic=f"topic-{t}",
                topic_id=uuid.UUID(int=t + 1),
                partitions=[
                    FetchPartition(
                        partition_index=p,
                        high_watermark=1_000_000 + p,
                        last_stable_offset=1_000_000 + p,
                        log_start_offset=0,
                        preferred_read_replica=-1,
                        records=RECORDS,
                    )
                    for p in range(partitions)
                ],
            )
            for t in range(topics)
        ],
    )


def produce_request(topics: int, partitions: int) -> ProduceRequest:
    return ProduceRequest(
        acks=-1,
        timeout_ms=30_000,
        topic_data=[
            TopicProduceData(
                name=f"topic-{t}",
                partition_data=[
                    PartitionProduceData(index=p, records=RECORDS) for p in range(partitions)
                ],
            )
            for t in range(topics)
        ],
    )


def metadata_response(brokers: int, topics: int, partitions: int) -> MetadataResponse:
    return MetadataResponse(
        brokers=[MetadataResponseBroker(i, f"broker-{i}", 9092, None) for i in range(brokers)],
        cluster_id="cluster",
        controller_id=0,
        topics=[
            MetadataResponseTopic(
                name=f"topic-{t}",
                topic_id=uuid.UUID(int=t + 1),
                partitions=[
                    MetadataResponsePartition(
                        partition_index=p,
                        leader_id=p % brokers,
                        leader_epoch=3,
                        replica_nodes=[p % brokers, (p + 1) % brokers, (p + 2) % brokers],
                        isr_nodes=[p % brokers, (p + 1) % brokers, (p + 2) % brokers],
                    )
                    for p in range(partitions)
                ],
            )
            for t in range(topics)
        ],
    )


def _time(fn: Callable[[], object], min_seconds: float) -> float:
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    runs = max(3, int(min_seconds / max(timer.timeit(number) / number * number, 1e-9)))
    best = min(timer.repeat(repeat=min(runs, 7), number=number))
    return best / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=4)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=0.3, help="minimum time per case")
    args = parser.parse_args()
    t, p = args.topics, args.partitions
    cases: list[tuple[str, object, int]] = [
        (f"FetchResponse v11 ({t}x{p} partitions)", fetch_response(t, p), 11),
        (f"FetchResponse v16 ({t}x{p} partitions)", fetch_response(t, p), 16),
        (f"ProduceRequest v8 ({t}x{p} partitions)", produce_request(t, p), 8),
        (f"ProduceRequest v11 ({t}x{p} partitions)", produce_request(t, p), 11),
        ("MetadataResponse v12 (5 brokers, 50x12)", metadata_response(5, 50, 12), 12),
    ]
    print(f"{'message':44} {'bytes':>8} {'encode µs':>10} {'decode µs':>10}")
    for label, msg, version in cases:
        encode = msg.encode  # type: ignore[attr-defined]
        data = encode(version)
        cls = type(msg)
        view = memoryview(data)
        assert cls.decode(view, version).encode(version) == data  # type: ignore[attr-defined]
        enc_us = _time(partial(encode, version), args.seconds)
        dec_us = _time(partial(cls.decode, view, version), args.seconds)  # type: ignore[attr-defined]
        print(f"{label:44} {len(data):>8} {enc_us:>10.2f} {dec_us:>10.2f}")


if __name__ == "__main__":
    main()
