"""aiokafka 0.14 import path ``aiokafka.admin.new_topic`` (compatibility shim).

The classes live in :mod:`aiokafka.admin.types`; ``from aiokafka.admin import ...``
is the preferred spelling.
"""

from aiokafka.admin.types import NewTopic

__all__ = ["NewTopic"]
