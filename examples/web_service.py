"""An aiohttp web service that publishes each POSTed event to Kafka.

The producer starts and stops with the application (``cleanup_ctx``), so it is
connected before the first request is served and flushed before the process exits.
``POST /events?key=K`` with a JSON body answers ``201`` with the record's partition
and offset once Kafka has acknowledged it, and ``503`` with ``Retry-After`` when the
producer's buffer is full: ``send()`` waits at most ``max_block_ms`` for room in
``buffer_memory`` and then raises ``KafkaTimeoutError``, which is the signal to shed
load instead of queueing requests without bound.

Run it::

    python examples/web_service.py --bootstrap localhost:9092 --topic events --port 8080
    curl -X POST 'localhost:8080/events?key=user-1' -d '{"clicked": "buy"}'
"""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError, KafkaTimeoutError

PRODUCER = web.AppKey("producer", AIOKafkaProducer)
TOPIC = web.AppKey("topic", str)


def make_app(
    bootstrap_servers: str, topic: str, max_block_ms: int = 2000, **producer_options: Any
) -> web.Application:
    """The application. ``send()`` gives up after ``max_block_ms`` without buffer
    space (the request then gets 503); ``producer_options`` go to
    :class:`AIOKafkaProducer`."""
    app = web.Application()
    app[TOPIC] = topic

    async def producer_lifetime(app: web.Application) -> AsyncIterator[None]:
        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap_servers,
            value_serializer=lambda v: json.dumps(v).encode(),
            key_serializer=lambda k: k.encode() if k is not None else None,
            # Fail a request soon when there is no buffer space, rather than let
            # requests pile up behind a slow or unreachable cluster.
            max_block_ms=max_block_ms,
            **producer_options,
        )
        await producer.start()
        app[PRODUCER] = producer
        yield
        # Sends everything still buffered (bounded by delivery_timeout_ms).
        await producer.stop()

    app.cleanup_ctx.append(producer_lifetime)
    app.router.add_post("/events", publish)
    app.router.add_get("/health", health)
    return app


async def publish(request: web.Request) -> web.Response:
    try:
        event = await request.json()
    except json.JSONDecodeError:
        raise web.HTTPBadRequest(text="the body must be JSON") from None
    producer = request.app[PRODUCER]
    try:
        # Queues the record; waits only for metadata or buffer space.
        delivery = await producer.send(request.app[TOPIC], event, key=request.query.get("key"))
        # Waits for Kafka's acknowledgement (acks="all": every in-sync replica).
        metadata = await delivery
    except KafkaTimeoutError:
        # No room in buffer_memory within max_block_ms: the cluster is not keeping
        # up. Tell the caller to come back instead of holding the request.
        raise web.HTTPServiceUnavailable(
            text="the event buffer is full; retry later", headers={"Retry-After": "1"}
        ) from None
    except KafkaError as exc:
        # Not delivered within delivery_timeout_ms, or refused by the broker.
        raise web.HTTPBadGateway(text=f"not published: {exc!r}") from None
    body = {"partition": metadata.partition, "offset": metadata.offset}
    return web.json_response(body, status=201)


async def health(request: web.Request) -> web.Response:
    return web.json_response({"buffered_bytes": request.app[PRODUCER].buffered_bytes})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", default="localhost:9092")
    parser.add_argument("--topic", default="events")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()
    # run_app stops the application (and so the producer) on SIGINT and SIGTERM.
    web.run_app(make_app(args.bootstrap, args.topic), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
