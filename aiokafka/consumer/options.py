"""``AIOKafkaConsumer``'s constructor: every option as a typed keyword parameter.

Split from :mod:`aiokafka.consumer.consumer` by responsibility: this base class owns
the signature (names, types and defaults that ``inspect.signature()``, IDEs and mypy
see) and turns it into a validated :class:`~aiokafka.consumer.config.ConsumerConfig`;
the consumer itself sets up its state from that config in ``_setup``. The defaults
repeat ``ConsumerConfig``'s and ``ClientConfig``'s (``tests/unit/
test_constructor_signatures.py`` keeps them equal). The deserializers bind the
consumer's key and value types (``bytes`` without them), which reach
``ConsumerRecord.key`` / ``.value``.
"""

from __future__ import annotations

import asyncio
import inspect
import ssl
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic

from typing_extensions import Never

from aiokafka.abc import AbstractTokenProvider
from aiokafka.consumer.group.assignors.roundrobin import RoundRobinPartitionAssignor
from aiokafka.net.frames import DEFAULT_MAX_RESPONSE_SIZE
from aiokafka.net.secret import Secret
from aiokafka.option_checks import DEFAULT_CLIENT_ID
from aiokafka.options import given, reject_unknown
from aiokafka.structs import KT, VT

if TYPE_CHECKING:
    from .config import ConsumerConfig

__all__ = ["DEFAULT_ASSIGNORS", "OPTION_NAMES", "ConsumerOptions"]

#: aiokafka's default ``partition_assignment_strategy``.
DEFAULT_ASSIGNORS: tuple[Any, ...] = (RoundRobinPartitionAssignor,)


class ConsumerOptions(Generic[KT, VT]):
    """The constructor of :class:`~aiokafka.consumer.AIOKafkaConsumer`."""

    def __init__(
        self,
        *topics: str,
        loop: asyncio.AbstractEventLoop | None = None,
        bootstrap_servers: str | Sequence[str] = "localhost",
        client_id: str | None = DEFAULT_CLIENT_ID,
        metadata_max_age_ms: int = 300000,
        request_timeout_ms: int = 40000,
        retry_backoff_ms: int = 100,
        reconnect_backoff_ms: int = 50,
        reconnect_backoff_max_ms: int = 1000,
        connections_max_idle_ms: int = 540000,
        max_in_flight_requests_per_connection: int = 5,
        api_version: str | None = "auto",
        security_protocol: str = "PLAINTEXT",
        ssl_context: ssl.SSLContext | None = None,
        sasl_mechanism: str = "PLAIN",
        sasl_plain_username: str | None = None,
        sasl_plain_password: str | Secret | None = None,
        sasl_kerberos_service_name: str = "kafka",
        sasl_kerberos_domain_name: str | None = None,
        sasl_oauth_token_provider: AbstractTokenProvider | None = None,
        client_rack: str | None = None,
        allow_auto_topic_creation: bool = True,
        max_response_size: int = DEFAULT_MAX_RESPONSE_SIZE,
        enable_metrics_push: bool = True,
        group_id: str | None = None,
        group_instance_id: str | None = None,
        key_deserializer: Callable[[bytes], KT] | None = None,
        value_deserializer: Callable[[bytes], VT] | None = None,
        fetch_max_wait_ms: int = 500,
        fetch_min_bytes: int = 1,
        fetch_max_bytes: int = 52428800,
        max_partition_fetch_bytes: int = 1048576,
        max_poll_records: int | None = None,
        max_poll_interval_ms: int = 300000,
        auto_offset_reset: str = "latest",
        enable_auto_commit: bool = True,
        auto_commit_interval_ms: int = 5000,
        check_crcs: bool = True,
        isolation_level: str = "read_uncommitted",
        session_timeout_ms: int = 10000,
        heartbeat_interval_ms: int = 3000,
        rebalance_timeout_ms: int | None = None,
        consumer_timeout_ms: int = 200,
        partition_assignment_strategy: Sequence[Any] = DEFAULT_ASSIGNORS,
        exclude_internal_topics: bool = True,
        group_protocol: str = "classic",
        group_remote_assignor: str | None = None,
        **configs: Never,
    ) -> None:
        """Validate the options; nothing connects before ``start()``.

        Options are keyword-only, with aiokafka 0.14's names and defaults except
        where ``docs/migration-from-aiokafka.md`` says otherwise; each one's meaning
        is in the configuration reference (``docs/``) and on
        :class:`~aiokafka.consumer.config.ConsumerConfig` /
        :class:`~aiokafka.cluster.config.ClientConfig`.

        Args:
            *topics: Topics to subscribe to (same as calling ``subscribe()``).
            loop: Deprecated and ignored (a ``DeprecationWarning``).
            bootstrap_servers: ``"host:port[,host:port]"`` or a list of them.
            client_id: Sent in request headers (broker logs, quotas).
            metadata_max_age_ms: Refresh metadata at least this often.
            request_timeout_ms: Deadline of one request, and of connecting.
            retry_backoff_ms: Pause between retries of a failed request.
            reconnect_backoff_ms: First pause before reconnecting to a broker.
            reconnect_backoff_max_ms: Bound of the growing reconnect pause.
            connections_max_idle_ms: Close connections idle for longer.
            max_in_flight_requests_per_connection: Pipelining depth per connection.
            api_version: Accepted for aiokafka and ignored (versions are negotiated).
            security_protocol: ``PLAINTEXT``, ``SSL``, ``SASL_PLAINTEXT`` or ``SASL_SSL``.
            ssl_context: Required for the SSL protocols.
            sasl_mechanism: ``PLAIN``, ``SCRAM-SHA-256/512``, ``OAUTHBEARER``, ``GSSAPI``.
            sasl_plain_username: User for PLAIN/SCRAM.
            sasl_plain_password: Password for PLAIN/SCRAM (kept as a ``Secret``).
            sasl_kerberos_service_name: Kerberos service name (GSSAPI).
            sasl_kerberos_domain_name: Kerberos host name override (GSSAPI).
            sasl_oauth_token_provider: Token provider (OAUTHBEARER).
            client_rack: The client's rack (fetch from the closest replica).
            allow_auto_topic_creation: Let Metadata requests create missing topics.
            max_response_size: Largest response frame accepted from a broker.
            enable_metrics_push: Push metrics when the cluster subscribes (KIP-714).
            group_id: The consumer group; ``None`` for no group (no commits).
            group_instance_id: Static membership id (needs ``group_id``).
            key_deserializer: ``bytes -> key``; sets the records' key type.
            value_deserializer: ``bytes -> value``; sets the records' value type.
            fetch_max_wait_ms: How long the broker may wait for ``fetch_min_bytes``.
            fetch_min_bytes: Least data a Fetch response should carry.
            fetch_max_bytes: Most data one Fetch response may carry.
            max_partition_fetch_bytes: Most data per partition in one Fetch.
            max_poll_records: Most records one ``getmany()`` returns (None: no cap).
            max_poll_interval_ms: Longest time between two polls within a group.
            auto_offset_reset: ``"earliest"``, ``"latest"`` or ``"none"`` (raise).
            enable_auto_commit: Commit consumed offsets in the background.
            auto_commit_interval_ms: Period of those commits.
            check_crcs: Check each batch's CRC32C.
            isolation_level: ``"read_uncommitted"`` or ``"read_committed"``.
            session_timeout_ms: The group drops a member silent this long.
            heartbeat_interval_ms: Heartbeat period (below the session timeout).
            rebalance_timeout_ms: Time allowed to rejoin (default: the session's).
            consumer_timeout_ms: How long ``async for``/``getone`` sleep per check.
            partition_assignment_strategy: Client-side assignors (classic protocol).
            exclude_internal_topics: Hide internal topics from patterns and topics().
            group_protocol: ``"classic"`` or ``"consumer"`` (KIP-848).
            group_remote_assignor: KIP-848 server-side assignor, or ``None``.
            **configs: Nothing else: an unknown name raises.

        Raises:
            aiokafka.option_checks.InvalidOptionError: an unknown option (with the
                closest valid name) or a value of the wrong type; both a
                ``TypeError`` and a ``ValueError``.
            ValueError: a value out of range or conflicting options (names them).
        """
        options = given(locals())  # first: locals() holds only the arguments here
        reject_unknown("AIOKafkaConsumer", configs, OPTION_NAMES)
        # Imported by the first constructor call for import cost (issue 14): the
        # config dataclasses (this one, ClientConfig) are costly to define.
        from .config import ConsumerConfig

        self._setup(ConsumerConfig.from_options(**options), topics)

    def _setup(self, config: ConsumerConfig, topics: tuple[str, ...]) -> None:
        raise NotImplementedError  # pragma: no cover - AIOKafkaConsumer's


#: Every keyword option of ``AIOKafkaConsumer``, ``loop`` included.
OPTION_NAMES = frozenset(
    name
    for name, p in inspect.signature(ConsumerOptions.__init__).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY
)
