"""Records every request a client sends, for tests that check which requests a flow
used (and at which version) on top of what it achieved."""

from __future__ import annotations

from typing import Any

from aiokafka.cluster.client import AIOKafkaClient


class RequestLog:
    """Wraps ``client.send``; keeps (request class name, version it goes out at), and
    the requests themselves. ``client.write_nowait`` declines, so that every request
    goes through ``send``."""

    def __init__(self, client: AIOKafkaClient) -> None:
        self.calls: list[tuple[str, int]] = []
        self.requests: list[Any] = []
        original = client.send

        async def send(node: int, request: Any, **kw: Any) -> Any:
            version = await client.api_version(node, request.API_KEY, kw.get("max_version"))
            self.calls.append((type(request).__name__, version))
            self.requests.append(request)
            return await original(node, request, **kw)

        client.send = send  # type: ignore[method-assign]
        # The producer writes most Produce requests with write_nowait(); declining here
        # sends every request through send() above, where it is logged.
        client.write_nowait = lambda *args, **kw: False  # type: ignore[method-assign]

    def names(self) -> set[str]:
        return {name for name, _ in self.calls}

    def count(self, name: str) -> int:
        return sum(1 for n, _ in self.calls if n == name)

    def of(self, name: str) -> list[Any]:
        """The requests of class ``name``, in the order they were sent."""
        return [r for r in self.requests if type(r).__name__ == name]

    def versions(self, name: str) -> set[int]:
        return {version for n, version in self.calls if n == name}
