"""The consumer's one validated configuration.

:func:`ConsumerConfig.from_options` splits keyword options into the shared client
options (validated by :class:`~aiokafka.cluster.config.ClientConfig`) and the
consumer's own, checks every bound and cross-field rule here, and raises
``TypeError``/``ValueError`` naming the argument before anything connects.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiokafka.cluster.config import ClientConfig, check_loop
from aiokafka.option_checks import DEFAULT_CLIENT_ID, check_int, unknown_option

__all__ = ["ISOLATION_LEVELS", "OFFSET_RESET_STRATEGIES", "ConsumerConfig"]

#: ``auto_offset_reset`` values. ``"none"`` raises instead of resetting.
OFFSET_RESET_STRATEGIES = ("earliest", "latest", "none")
#: ``isolation_level`` values mapped to the protocol's IsolationLevel byte.
ISOLATION_LEVELS = {"read_uncommitted": 0, "read_committed": 1}
GROUP_PROTOCOLS = ("classic", "consumer")

# Kafka stores int32 sizes and timeouts; larger values overflow on the wire.
_INT32_MAX = 2**31 - 1

_CLIENT_OPTIONS = frozenset(f.name for f in dataclasses.fields(ClientConfig) if f.init)


def _default_assignors() -> tuple[Any, ...]:
    # Imported lazily: the assignors live in the group package, which may pull in
    # more than a manually assigned consumer needs.
    try:
        from aiokafka.consumer.group.assignors.roundrobin import (  # type: ignore[import-not-found,unused-ignore]
            RoundRobinPartitionAssignor,
        )
    except ImportError:  # pragma: no cover - the group package is written separately
        return ()
    return (RoundRobinPartitionAssignor,)


@dataclass(frozen=True, slots=True)
class ConsumerConfig:
    """Consumer options with aiokafka's names and defaults.

    Attributes mirror the keyword arguments of
    :class:`~aiokafka.consumer.consumer.AIOKafkaConsumer`; ``client`` holds the
    shared connection options (bootstrap servers, security, timeouts, ...).
    """

    client: ClientConfig = field(default_factory=ClientConfig)
    group_id: str | None = None
    group_instance_id: str | None = None
    key_deserializer: Callable[[bytes], Any] | None = None
    value_deserializer: Callable[[bytes], Any] | None = None
    fetch_max_wait_ms: int = 500
    fetch_min_bytes: int = 1
    fetch_max_bytes: int = 52428800
    max_partition_fetch_bytes: int = 1048576
    max_poll_records: int | None = None
    max_poll_interval_ms: int = 300000
    auto_offset_reset: str = "latest"
    enable_auto_commit: bool = True
    auto_commit_interval_ms: int = 5000
    check_crcs: bool = True
    isolation_level: str = "read_uncommitted"
    session_timeout_ms: int = 10000
    heartbeat_interval_ms: int = 3000
    rebalance_timeout_ms: int | None = None
    consumer_timeout_ms: int = 200
    partition_assignment_strategy: Sequence[Any] = field(default_factory=_default_assignors)
    exclude_internal_topics: bool = True
    group_protocol: str = "classic"
    #: KIP-848 only: the server-side assignor to ask for (``"uniform"`` or
    #: ``"range"`` on Kafka 4.x); None lets the broker choose.
    group_remote_assignor: str | None = None

    @classmethod
    def from_options(cls, **options: Any) -> ConsumerConfig:
        """Build a config from ``AIOKafkaConsumer``'s keyword options.

        Raises:
            aiokafka.option_checks.InvalidOptionError: an unknown option (with the closest
                valid name) or a value of the wrong type; both a ``TypeError`` and a
                ``ValueError``.
            ValueError: a value out of range (names it).
        """
        # aiokafka took the event loop (deprecated since 0.7.1): ignored, with a warning.
        check_loop(options.pop("loop", None), "AIOKafkaConsumer", stacklevel=4)
        own = {f.name for f in dataclasses.fields(cls)} - {"client"}
        client_opts: dict[str, Any] = {}
        consumer_opts: dict[str, Any] = {}
        for key, value in options.items():
            if key in own:
                consumer_opts[key] = value
            elif key in _CLIENT_OPTIONS:
                client_opts[key] = value
            else:
                raise unknown_option("AIOKafkaConsumer", key, own | _CLIENT_OPTIONS)
        client_opts.setdefault("client_id", DEFAULT_CLIENT_ID)
        return cls(client=ClientConfig(**client_opts), **consumer_opts)

    def __post_init__(self) -> None:
        if not isinstance(self.client, ClientConfig):
            raise TypeError("client must be a ClientConfig")
        for name in ("group_id", "group_instance_id"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise TypeError(f"{name} must be a non-empty str or None")
        if self.group_instance_id is not None and self.group_id is None:
            raise ValueError("group_instance_id needs a group_id (static membership)")
        for name in ("key_deserializer", "value_deserializer"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise TypeError(f"{name} must be callable or None")
        # The broker waits at most this long before answering an empty fetch; it is
        # added to the request timeout of every Fetch.
        check_int("fetch_max_wait_ms", self.fetch_max_wait_ms, 0, _INT32_MAX)
        check_int("fetch_min_bytes", self.fetch_min_bytes, 1, _INT32_MAX)
        check_int("fetch_max_bytes", self.fetch_max_bytes, 1, _INT32_MAX)
        check_int("max_partition_fetch_bytes", self.max_partition_fetch_bytes, 1, _INT32_MAX)
        if self.max_poll_records is not None:
            check_int("max_poll_records", self.max_poll_records, 1)
        check_int("max_poll_interval_ms", self.max_poll_interval_ms, 1, _INT32_MAX)
        if self.auto_offset_reset not in OFFSET_RESET_STRATEGIES:
            raise ValueError(
                f"auto_offset_reset must be one of {OFFSET_RESET_STRATEGIES}, "
                f"got {self.auto_offset_reset!r}"
            )
        for name in ("enable_auto_commit", "check_crcs", "exclude_internal_topics"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool")
        check_int("auto_commit_interval_ms", self.auto_commit_interval_ms, 1)
        if self.isolation_level not in ISOLATION_LEVELS:
            raise ValueError(
                f"isolation_level must be one of {tuple(ISOLATION_LEVELS)}, "
                f"got {self.isolation_level!r}"
            )
        check_int("session_timeout_ms", self.session_timeout_ms, 1, _INT32_MAX)
        check_int("heartbeat_interval_ms", self.heartbeat_interval_ms, 1, _INT32_MAX)
        # A heartbeat interval as long as the session would let the session expire
        # between two heartbeats.
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ValueError(
                "heartbeat_interval_ms must be lower than session_timeout_ms "
                f"({self.heartbeat_interval_ms} >= {self.session_timeout_ms})"
            )
        if self.rebalance_timeout_ms is not None:
            check_int("rebalance_timeout_ms", self.rebalance_timeout_ms, 1, _INT32_MAX)
        check_int("consumer_timeout_ms", self.consumer_timeout_ms, 0)
        if isinstance(self.partition_assignment_strategy, str | bytes) or not isinstance(
            self.partition_assignment_strategy, Sequence
        ):
            raise TypeError("partition_assignment_strategy must be a sequence of assignors")
        if self.group_protocol not in GROUP_PROTOCOLS:
            raise ValueError(
                f"group_protocol must be one of {GROUP_PROTOCOLS}, got {self.group_protocol!r}"
            )
        if self.group_remote_assignor is not None:
            if not isinstance(self.group_remote_assignor, str) or not self.group_remote_assignor:
                raise TypeError("group_remote_assignor must be a non-empty str or None")
            if self.group_protocol != "consumer":
                raise ValueError('group_remote_assignor needs group_protocol="consumer"')
        # The whole Fetch must fit the request timeout, or every long-poll that
        # returns nothing would look like a dead connection.
        if self.fetch_max_wait_ms >= self.client.request_timeout_ms:
            raise ValueError(
                "fetch_max_wait_ms must be lower than request_timeout_ms "
                f"({self.fetch_max_wait_ms} >= {self.client.request_timeout_ms})"
            )

    @property
    def isolation_level_code(self) -> int:
        """The protocol's IsolationLevel: 0 read_uncommitted, 1 read_committed."""
        return ISOLATION_LEVELS[self.isolation_level]

    @property
    def read_committed(self) -> bool:
        """True for ``isolation_level="read_committed"``."""
        return self.isolation_level == "read_committed"

    @property
    def telemetry_resource(self) -> dict[str, str]:
        """A consumer's KIP-714 resource attributes (the Java client's), where set."""
        resource = {
            "group_id": self.group_id,
            "group_instance_id": self.group_instance_id,
            "client_rack": self.client.client_rack,
        }
        return {k: v for k, v in resource.items() if v}

    @property
    def effective_rebalance_timeout_ms(self) -> int:
        """``rebalance_timeout_ms``, defaulting to ``session_timeout_ms`` (aiokafka)."""
        if self.rebalance_timeout_ms is None:
            return self.session_timeout_ms
        return self.rebalance_timeout_ms
