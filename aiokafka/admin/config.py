"""The admin client's configuration: the shared client options, validated once.

The admin client has no options of its own beyond the shared ones
(:class:`aiokafka.cluster.ClientConfig`, which includes ``request_timeout_ms``);
this module turns keyword arguments into that config and rejects unknown names with
a ``ValueError`` naming them, so a typo (``request_timeout=``) is not silently
ignored.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from aiokafka.cluster import ClientConfig

__all__ = ["ADMIN_OPTIONS", "admin_config"]

#: Keyword options ``AIOKafkaAdminClient`` accepts.
ADMIN_OPTIONS = frozenset(f.name for f in dataclasses.fields(ClientConfig) if f.init)


def admin_config(options: dict[str, Any]) -> ClientConfig:
    """Validate ``options`` into a :class:`ClientConfig`.

    Raises:
        ValueError: an unknown option (all unknown names are listed), or a value out
            of range (from :class:`ClientConfig`, naming the option).
        TypeError: a value of the wrong type.
    """
    unknown = sorted(set(options) - ADMIN_OPTIONS)
    if unknown:
        raise ValueError(
            f"unknown AIOKafkaAdminClient option(s): {', '.join(unknown)}; "
            f"known: {', '.join(sorted(ADMIN_OPTIONS))}"
        )
    return ClientConfig(**options)
