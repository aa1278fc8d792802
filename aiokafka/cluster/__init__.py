"""Cluster metadata, routing and retries: :class:`AIOKafkaClient`.

The names below are imported on first use (PEP 562): the producer's and consumer's
configs import :mod:`.config` at import, while :mod:`.client` (and with it the
connection layer) loads when a client starts.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
