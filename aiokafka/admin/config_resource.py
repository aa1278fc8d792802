"""aiokafka 0.14 import path ``aiokafka.admin.config_resource`` (compatibility shim).

The classes live in :mod:`aiokafka.admin.types`; ``from aiokafka.admin import ...``
is the preferred spelling.
"""

from aiokafka.admin.types import ConfigResource, ConfigResourceType

__all__ = ["ConfigResource", "ConfigResourceType"]
