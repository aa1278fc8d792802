"""`make demo`: start a local Apache Kafka, produce a few records, consume them back.

Everything runs on loopback: the broker is started by the project's test rig
(``tools/kafka/rig.py``) from the jars ``make kafka`` fetched, and stopped at the end.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import TopicPartition
from tools.kafka.rig import start_single

TOPIC = "demo-greetings"


async def produce_and_consume(bootstrap: str) -> None:
    async with AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5) as producer:
        futures = []
        for i, word in enumerate(["hello", "hallo", "bonjour", "hola", "ciao"]):
            fut = await producer.send(
                TOPIC,
                value=f"{word}, Kafka".encode(),
                key=f"greeting-{i}".encode(),
                headers=[("lang-index", str(i).encode())],
            )
            futures.append(fut)
        for meta in await asyncio.gather(*futures):
            print(f"produced  -> {meta.topic}[{meta.partition}] offset {meta.offset}")

    tps = [TopicPartition(TOPIC, p) for p in range(2)]
    async with AIOKafkaConsumer(bootstrap_servers=bootstrap) as consumer:
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        got = 0
        deadline = time.monotonic() + 30
        while got < 5 and time.monotonic() < deadline:
            batches = await consumer.getmany(timeout_ms=1000)
            for _tp, records in sorted(batches.items()):
                for r in records:
                    got += 1
                    print(
                        f"consumed <- {r.topic}[{r.partition}] offset {r.offset}: "
                        f"key={r.key!r} value={r.value!r} headers={r.headers}"
                    )
        if got < 5:
            raise SystemExit(f"demo failed: consumed only {got} of 5 records")


def main() -> None:
    print("starting a local Apache Kafka broker (KRaft, loopback)...")
    cluster = start_single()
    try:
        bootstrap = cluster.bootstrap_servers
        print(f"broker ready at {bootstrap} in {cluster.start_seconds:.1f}s")
        cluster.create_topic(TOPIC, partitions=2)
        asyncio.run(produce_and_consume(bootstrap))
        print("demo finished: 5 records produced and consumed")
    finally:
        cluster.stop()
        print("broker stopped")


if __name__ == "__main__":
    main()
