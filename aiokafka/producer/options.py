"""``AIOKafkaProducer``'s constructor: every option as a typed keyword parameter.

Split from :mod:`aiokafka.producer.producer` by responsibility: this base class owns
the signature (names, types and defaults that ``inspect.signature()``, IDEs and mypy
see) and turns it into a validated :class:`~aiokafka.producer.config.ProducerConfig`;
the producer sets up its state from that config in ``_setup``. The defaults repeat
``ProducerConfig``'s (``tests/unit/test_constructor_signatures.py`` keeps them
equal); ``acks``, ``enable_idempotence`` and ``delivery_timeout_ms`` default to
:data:`~aiokafka.options.RESOLVED`: the config derives them from the other options
(see its module docstring). The serializers bind the producer's key and value types
(``bytes`` without them), which ``send()`` then takes.
"""

from __future__ import annotations

import asyncio
import inspect
import ssl
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Generic

from typing_extensions import Never

from aiokafka.abc import AbstractTokenProvider
from aiokafka.net.frames import DEFAULT_MAX_RESPONSE_SIZE
from aiokafka.net.secret import Secret
from aiokafka.options import RESOLVED, given, reject_unknown
from aiokafka.structs import KT, VT

if TYPE_CHECKING:
    from .config import ProducerConfig

__all__ = ["OPTION_NAMES", "ProducerOptions"]


class ProducerOptions(Generic[KT, VT]):
    """The constructor of :class:`~aiokafka.producer.AIOKafkaProducer`."""

    def __init__(
        self,
        *,
        loop: asyncio.AbstractEventLoop | None = None,
        bootstrap_servers: str | Sequence[str] = "localhost",
        client_id: str | None = "aiokafka-producer",
        metadata_max_age_ms: int = 300000,
        request_timeout_ms: int = 40000,
        api_version: str | None = "auto",
        acks: int | str = RESOLVED,
        key_serializer: Callable[[KT], bytes | None] | None = None,
        value_serializer: Callable[[VT], bytes | None] | None = None,
        compression_type: str | None = None,
        compression_level: int | None = None,
        max_batch_size: int = 262144,
        partitioner: Callable[..., int] | None = None,
        max_request_size: int = 1048576,
        linger_ms: int = 0,
        send_backoff_ms: int = 100,
        retry_backoff_ms: int = 100,
        security_protocol: str = "PLAINTEXT",
        ssl_context: ssl.SSLContext | None = None,
        connections_max_idle_ms: int = 540000,
        enable_idempotence: bool = RESOLVED,
        transactional_id: str | None = None,
        transaction_timeout_ms: int = 60000,
        sasl_mechanism: str = "PLAIN",
        sasl_plain_username: str | None = None,
        sasl_plain_password: str | Secret | None = None,
        sasl_kerberos_service_name: str = "kafka",
        sasl_kerberos_domain_name: str | None = None,
        sasl_oauth_token_provider: AbstractTokenProvider | None = None,
        reconnect_backoff_ms: int = 50,
        reconnect_backoff_max_ms: int = 1000,
        allow_auto_topic_creation: bool = True,
        max_response_size: int = DEFAULT_MAX_RESPONSE_SIZE,
        enable_metrics_push: bool = True,
        client_rack: str | None = None,
        buffer_memory: int = 33554432,
        max_block_ms: int = 60000,
        delivery_timeout_ms: int = RESOLVED,
        max_in_flight_requests_per_connection: int = 5,
        **configs: Never,
    ) -> None:
        """Validate the options; nothing connects before ``start()``.

        Options are keyword-only, with aiokafka 0.14's names and defaults except
        where ``docs/migration-from-aiokafka.md`` says otherwise (idempotence and
        ``acks="all"`` by default, 256 KiB batches); each one's meaning is in the
        configuration reference (``docs/``) and on
        :class:`~aiokafka.producer.config.ProducerConfig`.

        Args:
            loop: Deprecated and ignored (a ``DeprecationWarning``).
            bootstrap_servers: ``"host:port[,host:port]"`` or a list of them.
            client_id: Sent in request headers (broker logs, quotas).
            metadata_max_age_ms: Refresh metadata at least this often.
            request_timeout_ms: Deadline of one request, and of connecting.
            api_version: Accepted for aiokafka and ignored (versions are negotiated).
            acks: 0, 1 or ``"all"``/-1; ``"all"`` unless set.
            key_serializer: ``key -> bytes``; sets the key type ``send()`` takes.
            value_serializer: ``value -> bytes``; sets the value type ``send()`` takes.
            compression_type: ``None``, ``"gzip"``, ``"snappy"``, ``"lz4"``, ``"zstd"``.
            compression_level: Codec-specific level (None: the codec's default).
            max_batch_size: Bytes a partition's batch may grow to.
            partitioner: ``(key_bytes, all, available) -> partition`` or None.
            max_request_size: Upper bound of one Produce request and one record.
            linger_ms: How long a batch may wait for more records.
            send_backoff_ms: Pause before resending after a retriable error.
            retry_backoff_ms: Pause between retries of a failed request.
            security_protocol: ``PLAINTEXT``, ``SSL``, ``SASL_PLAINTEXT`` or ``SASL_SSL``.
            ssl_context: Required for the SSL protocols.
            connections_max_idle_ms: Close connections idle for longer.
            enable_idempotence: On unless set off or incompatible options are given.
            transactional_id: Makes the producer transactional.
            transaction_timeout_ms: The coordinator aborts transactions open longer.
            sasl_mechanism: ``PLAIN``, ``SCRAM-SHA-256/512``, ``OAUTHBEARER``, ``GSSAPI``.
            sasl_plain_username: User for PLAIN/SCRAM.
            sasl_plain_password: Password for PLAIN/SCRAM (kept as a ``Secret``).
            sasl_kerberos_service_name: Kerberos service name (GSSAPI).
            sasl_kerberos_domain_name: Kerberos host name override (GSSAPI).
            sasl_oauth_token_provider: Token provider (OAUTHBEARER).
            reconnect_backoff_ms: First pause before reconnecting to a broker.
            reconnect_backoff_max_ms: Bound of the growing reconnect pause.
            allow_auto_topic_creation: Let Metadata requests create missing topics.
            max_response_size: Largest response frame accepted from a broker.
            enable_metrics_push: Push metrics when the cluster subscribes (KIP-714).
            client_rack: The client's rack.
            buffer_memory: Bytes of unsent batches before ``send()`` waits.
            max_block_ms: How long ``send()`` may wait for metadata or memory.
            delivery_timeout_ms: Bound from ``send()`` to the outcome (retries
                included); 120 s, or more if ``linger_ms + request_timeout_ms`` is.
            max_in_flight_requests_per_connection: Pipelining depth per connection.
            **configs: Nothing else: an unknown name raises.

        Raises:
            aiokafka.option_checks.InvalidOptionError: an unknown option (with the
                closest valid name) or a value of the wrong type; both a
                ``TypeError`` and a ``ValueError``.
            ValueError: a value out of range or conflicting options (names them).
        """
        options = given(locals())  # first: locals() holds only the arguments here
        reject_unknown("AIOKafkaProducer", configs, OPTION_NAMES)
        # Imported by the first constructor call for import cost (issue 14): the
        # config dataclasses (this one, ClientConfig) are costly to define.
        from .config import ProducerConfig

        self._setup(ProducerConfig.from_kwargs(**options))

    def _setup(self, config: ProducerConfig) -> None:
        raise NotImplementedError  # pragma: no cover - AIOKafkaProducer's


#: Every keyword option of ``AIOKafkaProducer``, ``loop`` included.
OPTION_NAMES = frozenset(
    name
    for name, p in inspect.signature(ProducerOptions.__init__).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY
)
