"""Cluster metadata, routing and retries: :class:`AIOKafkaClient`.

The names below are imported on first use (PEP 562): the client configs import
:mod:`.config` when a client is constructed, while :mod:`.client` (and with it the
connection layer) loads when a client starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiokafka._extensions import lazy_exports

if TYPE_CHECKING:
    from aiokafka.cluster.client import AIOKafkaClient, CoordinatorType
    from aiokafka.cluster.config import ClientConfig
    from aiokafka.cluster.metadata import ClusterMetadata, TopicMetadata

# Public name -> submodule that defines it.
_LAZY = {
    "AIOKafkaClient": "client",
    "ClientConfig": "config",
    "ClusterMetadata": "metadata",
    "CoordinatorType": "client",
    "TopicMetadata": "metadata",
}

__all__ = ["AIOKafkaClient", "ClientConfig", "ClusterMetadata", "CoordinatorType", "TopicMetadata"]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
