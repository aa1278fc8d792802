"""aiokafka 0.14 import path ``aiokafka.client`` (compatibility shim).

The cluster client lives in :mod:`aiokafka.cluster`;
``from aiokafka import AIOKafkaClient`` is the preferred spelling.
``CoordinationType`` is aiokafka's name of
:class:`~aiokafka.cluster.client.CoordinatorType`.
"""

from aiokafka.cluster.client import AIOKafkaClient, ConnectionGroup, CoordinatorType

CoordinationType = CoordinatorType

__all__ = ["AIOKafkaClient", "ConnectionGroup", "CoordinationType"]
