"""The admin client and its types: ``from aiokafka.admin import AIOKafkaAdminClient``.

What this package exports is the client and the public names (``__all__``) of the
modules that define its argument and result types, so each type is listed once, in
its own module.
"""

from __future__ import annotations

from aiokafka.admin import (
    acl_types,
    quorum,
    quota_types,
    results,
    scram,
    tokens,
    txn_types,
    types,
)
from aiokafka.admin.acl_types import *  # noqa: F403
from aiokafka.admin.client import AIOKafkaAdminClient
from aiokafka.admin.log_dirs import ReplicaLogDirInfo
from aiokafka.admin.quorum import *  # noqa: F403
from aiokafka.admin.quota_types import *  # noqa: F403
from aiokafka.admin.results import *  # noqa: F403
from aiokafka.admin.scram import *  # noqa: F403
from aiokafka.admin.tokens import *  # noqa: F403
from aiokafka.admin.txn_types import *  # noqa: F403
from aiokafka.admin.types import *  # noqa: F403

__all__ = ["AIOKafkaAdminClient", "ReplicaLogDirInfo"]
__all__ += acl_types.__all__
__all__ += quorum.__all__
__all__ += quota_types.__all__
__all__ += results.__all__
__all__ += scram.__all__
__all__ += tokens.__all__
__all__ += txn_types.__all__
__all__ += types.__all__
