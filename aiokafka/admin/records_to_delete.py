"""aiokafka 0.14 import path ``aiokafka.admin.records_to_delete`` (compatibility shim).

The classes live in :mod:`aiokafka.admin.types`; ``from aiokafka.admin import ...``
is the preferred spelling.
"""

from aiokafka.admin.types import RecordsToDelete

__all__ = ["RecordsToDelete"]
