"""The producer's validated configuration.

:class:`ProducerConfig` holds every producer option with aiokafka's names, checks
bounds and cross-field rules at construction and raises ``ValueError`` naming the
argument: an unknown option or a value of the wrong type raises
:class:`~aiokafka.option_checks.InvalidOptionError`, which is both a ``ValueError`` and
a ``TypeError`` (aiokafka 0.x and Python raise ``TypeError`` for those), and an
unknown option's message suggests the closest valid name. The options shared with
other clients (bootstrap servers, security, timeouts) are validated by
:class:`~aiokafka.cluster.config.ClientConfig`, which this config extends (the
producer's cluster client is given the config itself, as :attr:`ProducerConfig.client`).

Idempotence and acks follow the Java client (KIP-679) rather than aiokafka 0.8,
whose defaults (``acks=1``, no idempotence) could lose or duplicate records:

* ``acks`` defaults to ``"all"`` (stored as ``-1``).
* ``enable_idempotence`` left unset means *on*, unless a setting that
  idempotence cannot honour is given explicitly: ``acks`` other than all, or
  ``max_in_flight_requests_per_connection`` above 5. Then it is quietly off,
  exactly like Java.
* ``enable_idempotence=True`` together with such a setting is a ``ValueError``.
* ``transactional_id`` requires idempotence (``enable_idempotence=False`` with a
  ``transactional_id`` is a ``ValueError``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiokafka.cluster.config import ClientConfig, check_loop
from aiokafka.option_checks import InvalidOptionError, check_int, unknown_option
from aiokafka.record.compression import CODEC_NONE, check_codec, codec_from_name, compress

__all__ = ["DEFAULT_ACKS", "InvalidOptionError", "ProducerConfig", "Serializer"]

#: A key/value serializer: object in, bytes (or None) out.
Serializer = Callable[[Any], Any]

_UNSET: Any = object()

#: Default acks (Java's since 3.0): wait for all in-sync replicas.
DEFAULT_ACKS = -1

# The broker tracks the last five batches per producer for duplicate detection
# (ProducerStateEntry.NUM_BATCHES_TO_RETAIN); more in flight per connection could
# make a retried batch fall outside that window and be written twice.
_MAX_IDEMPOTENT_IN_FLIGHT = 5

# Kafka message sizes are int32 on the wire.
_INT32_MAX = 2**31 - 1


def _parse_acks(value: Any) -> int:
    if value == "all" or (isinstance(value, int) and not isinstance(value, bool) and value == -1):
        return -1
    if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
        return value
    raise ValueError(f"acks must be 0, 1, -1 or 'all', got {value!r}")


@dataclass(frozen=True, slots=True)
class ProducerConfig(ClientConfig):
    """All options of :class:`~aiokafka.producer.AIOKafkaProducer`.

    Construct with keywords (an unknown keyword raises
    :class:`~aiokafka.option_checks.InvalidOptionError` naming it and the closest
    valid option).
    The shared client options (``bootstrap_servers``, ``client_id``,
    ``metadata_max_age_ms``, ``request_timeout_ms``, ``retry_backoff_ms``,
    ``security_protocol``, ``ssl_context``, ``sasl_*``, ...) are documented on
    :class:`~aiokafka.cluster.config.ClientConfig`.

    Attributes:
        acks: 0 (do not wait), 1 (leader wrote it) or -1/"all" (every in-sync
            replica has it). Stored as an int. Default "all".
        key_serializer: Turns a key into bytes; ``None`` means keys are bytes.
        value_serializer: Turns a value into bytes; ``None`` means values are bytes.
        compression_type: ``None``, ``"gzip"``, ``"snappy"``, ``"lz4"`` or ``"zstd"``.
        compression_level: Codec-specific level, ``None`` for the codec default.
        max_batch_size: Bytes (uncompressed) a partition's batch may grow to before
            it is sent. Default 256 KiB, where aiokafka and the Java client use 16 KiB:
            a busy producer then sends a few large batches instead of many small
            ones, which costs both it and the broker less per record; memory is
            reserved as a batch fills (see ``buffer_memory``), and a batch is sent
            once its broker is idle or ``linger_ms`` passed, however full it is.
        linger_ms: How long a batch that is not full may wait for more records
            while a request to its partition's leader is in flight. When nothing
            is in flight to that broker the batch is sent at once, so linger never
            adds latency to an idle producer (aiokafka's rule; the Java client
            always waits ``linger.ms``); a busy producer batches until the response
            arrives or ``linger_ms`` passes, whichever is first.
        max_request_size: Upper bound of one Produce request and of one record.
        partitioner: ``partitioner(key_bytes, all_partitions, available_partitions)
            -> int``; ``None`` for the default (murmur2 for keys, sticky otherwise).
        buffer_memory: Bytes the producer may hold in unsent batches; ``send()``
            waits for space beyond that. A batch reserves 16 KiB (or its first
            record's size) and doubles its reservation as it fills, up to
            ``max_batch_size``, while there is room; a batch that cannot grow is
            sent as it is.
        max_block_ms: How long ``send()`` may wait for metadata or buffer space
            before raising ``KafkaTimeoutError``.
        delivery_timeout_ms: Upper bound on the time from ``send()`` to the
            record's outcome, retries included. Must be at least ``linger_ms +
            request_timeout_ms`` (a request must be able to complete once).
        enable_idempotence: See the module docstring; resolved to a bool.
        transactional_id: Makes the producer transactional (records are sent only
            inside transactions; see ``AIOKafkaProducer.begin_transaction``); it
            turns idempotence on. A new producer with the same id fences the old one.
        transaction_timeout_ms: Sent to the coordinator with InitProducerId: a
            transaction open longer than this is aborted by the coordinator (at most
            the broker's ``transaction.max.timeout.ms``).
        client: This config, as the shared
            :class:`~aiokafka.cluster.config.ClientConfig` it extends.
    """

    # The shared options are ClientConfig's; only client_id's default differs.
    client_id: str | None = "aiokafka-producer"
    acks: Any = _UNSET
    key_serializer: Serializer | None = None
    value_serializer: Serializer | None = None
    compression_type: str | None = None
    compression_level: int | None = None
    max_batch_size: int = 262144
    partitioner: Callable[..., int] | None = None
    max_request_size: int = 1048576
    linger_ms: int = 0
    send_backoff_ms: int = 100
    enable_idempotence: Any = _UNSET
    transactional_id: str | None = None
    transaction_timeout_ms: int = 60000
    buffer_memory: int = 33554432
    max_block_ms: int = 60000
    delivery_timeout_ms: Any = _UNSET
    loop: Any = None
    # Derived (not constructor arguments).
    codec: int = field(init=False, default=CODEC_NONE)

    def __post_init__(self) -> None:
        check_loop(self.loop, "AIOKafkaProducer", stacklevel=6)
        # The shared options' rules (and the password's Secret). Explicit, not
        # super(): slots=True makes a new class that super()'s cell does not know.
        ClientConfig.__post_init__(self)
        self._check_serializers()
        self._check_sizes()
        self._check_compression()
        self._resolve_idempotence()
        self._check_timeouts()

    @property
    def client(self) -> ClientConfig:
        """The options the producer's cluster client is made with: this config."""
        return self

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> ProducerConfig:
        """Build from keywords.

        Raises:
            InvalidOptionError: an unknown keyword (named, with the closest valid
                one) or a value of the wrong type; a ``ValueError`` and a ``TypeError``.
            ValueError: a value out of range or conflicting with another option.
        """
        for name in kwargs:
            if name not in _OPTIONS:
                raise unknown_option("AIOKafkaProducer", name, _OPTIONS)
        return cls(**kwargs)

    # -- rules --------------------------------------------------------------------------

    def _check_serializers(self) -> None:
        for name in ("key_serializer", "value_serializer", "partitioner"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise InvalidOptionError(
                    f"{name} must be callable or None, got {type(value).__name__}", name
                )

    def _check_sizes(self) -> None:
        # A batch must hold at least one record header; an int32 bounds every size.
        check_int("max_batch_size", self.max_batch_size, 1, _INT32_MAX)
        check_int("max_request_size", self.max_request_size, 1, _INT32_MAX)
        check_int("buffer_memory", self.buffer_memory, 1)
        check_int("linger_ms", self.linger_ms, 0)
        check_int("max_block_ms", self.max_block_ms, 0)
        check_int("send_backoff_ms", self.send_backoff_ms, 0)
        check_int("transaction_timeout_ms", self.transaction_timeout_ms, 1, _INT32_MAX)
        # buffer_memory below max_batch_size is allowed: batches reserve memory as
        # they fill, so they simply stop growing at what the buffer holds.

    def _check_compression(self) -> None:
        if self.compression_type is None:
            codec = CODEC_NONE
        else:
            if not isinstance(self.compression_type, str):
                raise InvalidOptionError(
                    "compression_type must be a str or None", "compression_type"
                )
            try:
                codec = codec_from_name(self.compression_type)
            except ValueError:
                raise ValueError(
                    "compression_type must be None, 'gzip', 'snappy', 'lz4' or 'zstd', got "
                    f"{self.compression_type!r}"
                ) from None
        # A missing library is reported now, not at the first send.
        check_codec(codec)
        self._set("codec", codec)
        level = self.compression_level
        if level is not None and (not isinstance(level, int) or isinstance(level, bool)):
            raise InvalidOptionError(
                "compression_level must be an int or None", "compression_level"
            )
        if level is not None:
            if codec == CODEC_NONE:
                raise ValueError("compression_level needs a compression_type")
            # Each codec has its own range; compressing nothing checks the level in the
            # one place that knows the ranges, so a bad level fails here and not at the
            # first batch (where every record of the batch would fail).
            compress(codec, b"", level)

    def _resolve_idempotence(self) -> None:
        acks_given = self.acks is not _UNSET
        acks = _parse_acks(self.acks) if acks_given else DEFAULT_ACKS
        self._set("acks", acks)
        in_flight = self.max_in_flight_requests_per_connection
        idem = self.enable_idempotence
        if idem is not _UNSET and not isinstance(idem, bool):
            raise InvalidOptionError("enable_idempotence must be a bool", "enable_idempotence")
        conflicts = []
        if acks != -1:
            conflicts.append(f"acks={acks} (idempotence needs acks='all')")
        if in_flight > _MAX_IDEMPOTENT_IN_FLIGHT:
            conflicts.append(
                f"max_in_flight_requests_per_connection={in_flight} (at most "
                f"{_MAX_IDEMPOTENT_IN_FLIGHT} with idempotence)"
            )
        if self.transactional_id is not None:
            if not isinstance(self.transactional_id, str) or not self.transactional_id:
                raise ValueError("transactional_id must be a non-empty str or None")
            if idem is False:
                raise ValueError("transactional_id requires enable_idempotence=True")
            idem = True
        if idem is True and conflicts:
            raise ValueError("enable_idempotence=True conflicts with " + ", ".join(conflicts))
        if idem is _UNSET:
            # KIP-679: on by default, quietly off when a conflicting option was given.
            idem = not conflicts
        self._set("enable_idempotence", idem)

    def _check_timeouts(self) -> None:
        lower = self.linger_ms + self.request_timeout_ms
        if self.delivery_timeout_ms is _UNSET:
            self._set("delivery_timeout_ms", max(120000, lower))
        else:
            check_int("delivery_timeout_ms", self.delivery_timeout_ms, 1)
            if self.delivery_timeout_ms < lower:
                raise ValueError(
                    f"delivery_timeout_ms ({self.delivery_timeout_ms}) must be >= linger_ms + "
                    f"request_timeout_ms ({lower})"
                )


# The keyword options ProducerConfig (and so AIOKafkaProducer) accepts.
_OPTIONS = frozenset(f.name for f in dataclasses.fields(ProducerConfig) if f.init)
