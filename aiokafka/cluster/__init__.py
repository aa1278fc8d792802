"""Cluster metadata, routing and retries: :class:`AIOKafkaClient`."""

from __future__ import annotations

from aiokafka.cluster.client import AIOKafkaClient, CoordinatorType
from aiokafka.cluster.config import ClientConfig
from aiokafka.cluster.metadata import ClusterMetadata, TopicMetadata

__all__ = ["AIOKafkaClient", "ClientConfig", "ClusterMetadata", "CoordinatorType", "TopicMetadata"]
