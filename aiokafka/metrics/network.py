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

from .stats import Sensor

__all__ = ["NetworkMetrics", "NodeMetrics", "empty_network"]


class NodeMetrics:
    """The sensors of one broker (node id or bootstrap label) and the client-wide ones
    they also feed."""

    __slots__ = ("_all", "latency", "received", "sent")

    def __init__(self, all_nodes: NodeMetrics | None = None) -> None:
        #: Seconds from registering a request to reading its response.
        self.latency = Sensor()
        #: Bytes of each request frame written.
        self.sent = Sensor()
        #: Bytes of each response frame read.
        self.received = Sensor()
        self._all = all_nodes

    def request_sent(self, size: int, now: float) -> None:
        """A request frame of ``size`` bytes was handed to the transport."""
        self.sent.record(size, now)
        if self._all is not None:
            self._all.sent.record(size, now)

    def response_received(self, latency: float, size: int, now: float) -> None:
        """A response of ``size`` bytes arrived ``latency`` seconds after its request."""
        self.latency.record(latency, now)
        self.received.record(size, now)
        if self._all is not None:
            self._all.latency.record(latency, now)
            self._all.received.record(size, now)

    def snapshot(self, now: float) -> dict[str, float]:
        """This node's values under the Java client's per-node names."""
        latency, sent, received = self.latency, self.sent, self.received
        return {
            "request-latency-avg": latency.avg(now) * 1000,
            "request-latency-max": latency.max(now) * 1000,
            "request-total": float(sent.count),
            "request-rate": sent.count_rate(now),
            "request-size-avg": sent.avg(now),
            "request-size-max": sent.max(now),
            "response-total": float(received.count),
            "response-rate": received.count_rate(now),
            "outgoing-byte-total": sent.total,
            "outgoing-byte-rate": sent.rate(now),
            "incoming-byte-total": received.total,
            "incoming-byte-rate": received.rate(now),
        }


class NetworkMetrics:
    """Per-node and client-wide request metrics, connection counts."""

    def __init__(self) -> None:
        self._all = NodeMetrics()
        self._nodes: dict[int | str, NodeMetrics] = {}
        #: Pooled connections that completed their handshake.
        self.connections_created = Sensor()

    def node(self, node_id: int | str | None) -> NodeMetrics:
        """The sensors of ``node_id`` (made on first use)."""
        key: int | str = "unknown" if node_id is None else node_id
        node = self._nodes.get(key)
        if node is None:
            node = self._nodes[key] = NodeMetrics(self._all)
        return node

    def snapshot(self, connection_count: int) -> dict[str, Any]:
        """Client-wide values, plus ``"nodes"``: ``{node id: {name: value}}`` for the
        brokers this client has talked to (bootstrap connections under their labels,
        such as ``"bootstrap-0"``)."""
        now = time.monotonic()
        out: dict[str, Any] = self._all.snapshot(now)
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
