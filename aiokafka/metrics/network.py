"""Request and connection metrics of one client's connections.

:class:`NetworkMetrics` belongs to the client's connection pool
(:class:`~aiokafka.cluster.connections.ConnectionPool`); each connection records into
the :class:`NodeMetrics` of its broker, once per request and once per response.
Names follow the Java client's common network metrics (``request-latency-avg``,
``outgoing-byte-rate``, ...) and its per-node groups.
"""

from __future__ import annotations

import time
from typing import Any

from .stats import Combined, Sensor

__all__ = ["NetworkMetrics", "NodeMetrics", "empty_network"]


class NodeMetrics:
    """The sensors of one broker (node id or bootstrap label)."""

    __slots__ = ("latency", "received", "sent")

    def __init__(self) -> None:
        #: Seconds from registering a request to reading its response.
        self.latency = Sensor()
        #: Bytes of each request frame written.
        self.sent = Sensor()
        #: Bytes of each response frame read.
        self.received = Sensor()

    def request_sent(self, size: int, now: float) -> None:
        """A request frame of ``size`` bytes was handed to the transport."""
        self.sent.record(size, now)

    def response_received(self, latency: float, size: int, now: float) -> None:
        """A response of ``size`` bytes arrived ``latency`` seconds after its request."""
        self.latency.record(latency, now)
        self.received.record(size, now)

    def snapshot(self, now: float) -> dict[str, float]:
        """This node's values under the Java client's per-node names."""
        return _values(
            Combined([self.latency], now),
            Combined([self.sent], now),
            Combined([self.received], now),
        )


def _values(latency: Combined, sent: Combined, received: Combined) -> dict[str, float]:
    return {
        "request-latency-avg": latency.avg() * 1000,
        "request-latency-max": latency.max() * 1000,
        "request-total": float(sent.count),
        "request-rate": sent.count_rate(),
        "request-size-avg": sent.avg(),
        "request-size-max": sent.max(),
        "response-total": float(received.count),
        "response-rate": received.count_rate(),
        "outgoing-byte-total": sent.total,
        "outgoing-byte-rate": sent.rate(),
        "incoming-byte-total": received.total,
        "incoming-byte-rate": received.rate(),
    }


class NetworkMetrics:
    """Per-node and client-wide request metrics, connection counts."""

    def __init__(self) -> None:
        self._nodes: dict[int | str, NodeMetrics] = {}
        #: Pooled connections that completed their handshake.
        self.connections_created = Sensor()

    def node(self, node_id: int | str | None) -> NodeMetrics:
        """The sensors of ``node_id`` (made on first use)."""
        key: int | str = "unknown" if node_id is None else node_id
        node = self._nodes.get(key)
        if node is None:
            node = self._nodes[key] = NodeMetrics()
        return node

    def snapshot(self, connection_count: int) -> dict[str, Any]:
        """Client-wide values, plus ``"nodes"``: ``{node id: {name: value}}`` for the
        brokers this client has talked to (bootstrap connections under their labels,
        such as ``"bootstrap-0"``)."""
        now = time.monotonic()
        nodes = list(self._nodes.values())
        # Client-wide values read every node's sensors: nothing is recorded twice.
        out: dict[str, Any] = _values(
            Combined([n.latency for n in nodes], now),
            Combined([n.sent for n in nodes], now),
            Combined([n.received for n in nodes], now),
        )
        created = self.connections_created
        out["connection-count"] = float(connection_count)
        out["connection-creation-total"] = float(created.count)
        out["connection-creation-rate"] = created.count_rate(now)
        # Every pooled connection made is open or was closed.
        out["connection-close-total"] = float(max(created.count - connection_count, 0))
        out["nodes"] = {key: node.snapshot(now) for key, node in self._nodes.items()}
        return out


def empty_network() -> dict[str, Any]:
    """Network values of a client that has made no connection (before ``start()``)."""
    return NetworkMetrics().snapshot(0)
