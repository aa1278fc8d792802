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
from aiokafka.cluster.config import check_loop
from aiokafka.option_checks import unknown_option

__all__ = ["ADMIN_OPTIONS", "admin_config"]

#: Keyword options ``AIOKafkaAdminClient`` accepts.
ADMIN_OPTIONS = frozenset(f.name for f in dataclasses.fields(ClientConfig) if f.init)


def admin_config(options: dict[str, Any]) -> ClientConfig:
    """Validate ``options`` into a :class:`ClientConfig`.

    Raises:
        aiokafka.option_checks.InvalidOptionError: an unknown option (with the closest
            valid name) or a value of the wrong type; both a ``ValueError`` and a
            ``TypeError``.
        ValueError: a value out of range (from :class:`ClientConfig`, naming it).
    """
    options = dict(options)
    check_loop(options.pop("loop", None), "AIOKafkaAdminClient", stacklevel=4)
    unknown = sorted(set(options) - ADMIN_OPTIONS)
    if unknown:
        raise unknown_option("AIOKafkaAdminClient", unknown[0], ADMIN_OPTIONS)
    return ClientConfig(**options)
