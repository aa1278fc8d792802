"""aiokafka 0.14 import path ``aiokafka.admin.new_partitions`` (compatibility shim).

The classes live in :mod:`aiokafka.admin.types`; ``from aiokafka.admin import ...``
is the preferred spelling.
"""

from aiokafka.admin.types import NewPartitions

__all__ = ["NewPartitions"]
