"""The data source's read and write options, validated when the query is planned.

Names and JSON shapes follow Spark's own Kafka connector (``subscribe``,
``startingOffsets`` = ``{"topic": {"0": 23, "1": -2}}`` with -2 earliest and -1 latest,
...). Spark hands options over with lower-cased keys; every error message names the
option the way the user wrote it in the documentation. Pure: no pyspark, no asyncio.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .kafka_options import KAFKA_PREFIX, OptionError, client_kwargs, ssl_options

#: Per-partition offset values with a special meaning, as in Spark's connector.
LATEST = -1
EARLIEST = -2

TP = tuple[str, int]

# Options Spark itself adds or that belong to the stream, not to the source.
_SPARK_GENERIC = {"path", "checkpointlocation", "queryname"}

_READ_OPTIONS = {
    "subscribe",
    "subscribepattern",
    "assign",
    "startingoffsets",
    "endingoffsets",
    "startingoffsetsbytimestamp",
    "endingoffsetsbytimestamp",
    "startingtimestamp",
    "endingtimestamp",
    "startingoffsetsbytimestampstrategy",
    "maxoffsetspertrigger",
    "minpartitions",
    "failondataloss",
    "includeheaders",
    "kafkaconsumer.polltimeoutms",
    "maxrecordsperbatch",
}
_WRITE_OPTIONS = {"topic", "exactlyonce", "transactionalidprefix", "includeheaders"}

# Canonical spelling for messages.
_CANON = {
    name.lower(): name
    for name in (
        "subscribe",
        "subscribePattern",
        "assign",
        "startingOffsets",
        "endingOffsets",
        "startingOffsetsByTimestamp",
        "endingOffsetsByTimestamp",
        "startingTimestamp",
        "endingTimestamp",
        "startingOffsetsByTimestampStrategy",
        "maxOffsetsPerTrigger",
        "minPartitions",
        "failOnDataLoss",
        "includeHeaders",
        "kafkaConsumer.pollTimeoutMs",
        "maxRecordsPerBatch",
        "topic",
        "exactlyOnce",
        "transactionalIdPrefix",
    )
}


def _canon(key: str) -> str:
    return _CANON.get(key, key)


@dataclass(frozen=True)
class OffsetSpec:
    """Where reading starts or ends.

    ``kind`` is ``"earliest"``, ``"latest"``, ``"offsets"`` (``offsets`` maps
    ``(topic, partition)`` to an offset, or to :data:`EARLIEST`/:data:`LATEST`),
    ``"timestamps"`` (``offsets`` maps to a timestamp in ms) or ``"timestamp"`` (one
    ``timestamp`` for every partition).
    """

    kind: Literal["earliest", "latest", "offsets", "timestamps", "timestamp"]
    offsets: dict[TP, int] = field(default_factory=dict)
    timestamp: int | None = None


@dataclass(frozen=True)
class Subscription:
    """What to read: ``kind`` is ``"subscribe"`` (``topics``), ``"subscribePattern"``
    (``pattern``) or ``"assign"`` (``partitions``)."""

    kind: Literal["subscribe", "subscribePattern", "assign"]
    topics: tuple[str, ...] = ()
    pattern: str = ""
    partitions: tuple[TP, ...] = ()

    def matches(self, topic: str) -> bool:
        """Whether ``topic`` belongs to the subscription (subscribe/pattern kinds)."""
        if self.kind == "subscribe":
            return topic in self.topics
        if self.kind == "subscribePattern":
            return re.fullmatch(self.pattern, topic) is not None
        return any(t == topic for t, _ in self.partitions)


@dataclass(frozen=True)
class ReadOptions:
    """Validated read options (see ``docs/spark.md`` for each one)."""

    subscription: Subscription
    starting: OffsetSpec
    ending: OffsetSpec
    timestamp_strategy: Literal["error", "latest"]
    max_offsets_per_trigger: int | None
    min_partitions: int | None
    fail_on_data_loss: bool
    include_headers: bool
    poll_timeout_ms: int
    max_records_per_batch: int
    consumer_kwargs: dict[str, Any]
    ssl_options: dict[str, str]


@dataclass(frozen=True)
class WriteOptions:
    """Validated write options (see ``docs/spark.md``)."""

    topic: str | None
    exactly_once: bool
    transactional_id_prefix: str
    producer_kwargs: dict[str, Any]
    ssl_options: dict[str, str]


def _check_known(options: Mapping[str, str], known: set[str], what: str) -> None:
    for key in options:
        lowered = key.lower()
        if lowered.startswith(KAFKA_PREFIX) or lowered in _SPARK_GENERIC:
            continue
        if lowered not in known:
            raise OptionError(f"unknown {what} option {key!r}")


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    return {key.lower(): value for key, value in options.items()}


def _json(name: str, value: str) -> Any:
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise OptionError(f"option {name!r}: invalid JSON ({exc.msg} at {exc.pos})") from None


def _int_opt(opts: Mapping[str, str], key: str, minimum: int) -> int | None:
    if key not in opts:
        return None
    name = _canon(key)
    try:
        value = int(opts[key])
    except ValueError:
        raise OptionError(f"option {name!r}: expected an integer, got {opts[key]!r}") from None
    if value < minimum:
        raise OptionError(f"option {name!r} must be >= {minimum}, got {value}")
    return value


def _bool_opt(opts: Mapping[str, str], key: str, default: bool) -> bool:
    if key not in opts:
        return default
    value = opts[key].strip().lower()
    if value not in ("true", "false"):
        raise OptionError(f"option {_canon(key)!r}: expected true or false, got {opts[key]!r}")
    return value == "true"


def _partition_map(name: str, value: str, allow_special: bool) -> dict[TP, int]:
    parsed = _json(name, value)
    if not isinstance(parsed, dict) or not parsed:
        raise OptionError(f'option {name!r}: expected {{"topic": {{"0": value, ...}}, ...}}')
    out: dict[TP, int] = {}
    for topic, parts in parsed.items():
        if not isinstance(parts, dict):
            raise OptionError(f"option {name!r}: topic {topic!r} must map partitions to values")
        for part, offset in parts.items():
            try:
                partition = int(part)
            except ValueError:
                raise OptionError(f"option {name!r}: partition {part!r} is not a number") from None
            if not isinstance(offset, int) or isinstance(offset, bool):
                raise OptionError(f"option {name!r}: value of {topic}-{part} is not an integer")
            if offset < 0 and not (allow_special and offset in (LATEST, EARLIEST)):
                raise OptionError(f"option {name!r}: invalid value {offset} for {topic}-{part}")
            out[(topic, partition)] = offset
    return out


def _subscription(opts: Mapping[str, str]) -> Subscription:
    given = [key for key in ("subscribe", "subscribepattern", "assign") if key in opts]
    if len(given) != 1:
        raise OptionError(
            "exactly one of the options 'subscribe', 'subscribePattern', 'assign' is required"
            + (f", got {[_canon(k) for k in given]}" if given else "")
        )
    key = given[0]
    value = opts[key]
    if key == "subscribe":
        topics = tuple(t.strip() for t in value.split(",") if t.strip())
        if not topics:
            raise OptionError("option 'subscribe': no topic given")
        return Subscription("subscribe", topics=topics)
    if key == "subscribepattern":
        try:
            re.compile(value)
        except re.error as exc:
            raise OptionError(f"option 'subscribePattern': invalid pattern ({exc})") from None
        return Subscription("subscribePattern", pattern=value)
    parsed = _json("assign", value)
    if not isinstance(parsed, dict) or not parsed:
        raise OptionError("option 'assign': expected {\"topic\": [0, 1], ...}")
    tps: list[TP] = []
    for topic, parts in parsed.items():
        if not isinstance(parts, list) or not all(
            isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in parts
        ):
            raise OptionError(f"option 'assign': topic {topic!r} must map to partition numbers")
        tps.extend((topic, p) for p in parts)
    return Subscription("assign", partitions=tuple(sorted(set(tps))))


def _offset_spec(opts: Mapping[str, str], which: Literal["starting", "ending"]) -> OffsetSpec:
    by_offset = f"{which}offsets"
    by_ts = f"{which}offsetsbytimestamp"
    global_ts = f"{which}timestamp"
    given = [k for k in (global_ts, by_ts, by_offset) if k in opts]
    # Spark's precedence: a global timestamp, then per-partition timestamps, then offsets.
    if not given:
        return OffsetSpec("earliest" if which == "starting" else "latest")
    key = given[0]
    name = _canon(key)
    if key == global_ts:
        stamp = _int_opt(opts, key, 0)
        return OffsetSpec("timestamp", timestamp=stamp)
    if key == by_ts:
        return OffsetSpec("timestamps", offsets=_partition_map(name, opts[key], False))
    value = opts[key].strip()
    if value.lower() in ("earliest", "latest"):
        if which == "ending" and value.lower() == "earliest":
            raise OptionError("option 'endingOffsets': 'earliest' is not allowed")
        return OffsetSpec("earliest" if value.lower() == "earliest" else "latest")
    offsets = _partition_map(name, value, True)
    if which == "ending" and EARLIEST in offsets.values():
        raise OptionError("option 'endingOffsets': -2 (earliest) is not allowed")
    return OffsetSpec("offsets", offsets=offsets)


def parse_read_options(options: Mapping[str, str], streaming: bool) -> ReadOptions:
    """Validate the options of ``spark.read`` / ``spark.readStream``.

    Raises:
        OptionError: naming the unknown, missing or malformed option.
    """
    _check_known(options, _READ_OPTIONS, "read")
    opts = _lower(options)
    subscription = _subscription(opts)
    starting = _offset_spec(opts, "starting")
    if streaming and not any(
        k in opts for k in ("startingoffsets", "startingoffsetsbytimestamp", "startingtimestamp")
    ):
        # As Spark's connector: a new streaming query starts at the end.
        starting = OffsetSpec("latest")
    ending = _offset_spec(opts, "ending")
    if streaming and any(
        k in opts for k in ("endingoffsets", "endingoffsetsbytimestamp", "endingtimestamp")
    ):
        raise OptionError("option 'endingOffsets' is for batch queries only")
    if not streaming and starting.kind == "latest":
        raise OptionError("option 'startingOffsets': 'latest' is not allowed in batch queries")
    if not streaming and LATEST in starting.offsets.values() and starting.kind == "offsets":
        raise OptionError("option 'startingOffsets': -1 (latest) is not allowed in batch queries")
    if not streaming and "maxoffsetspertrigger" in opts:
        raise OptionError("option 'maxOffsetsPerTrigger' is for streaming queries only")
    strategy = opts.get("startingoffsetsbytimestampstrategy", "error").lower()
    if strategy not in ("error", "latest"):
        raise OptionError(
            f"option 'startingOffsetsByTimestampStrategy' must be error or latest, got {strategy!r}"
        )
    return ReadOptions(
        subscription=subscription,
        starting=starting,
        ending=ending,
        timestamp_strategy="latest" if strategy == "latest" else "error",
        max_offsets_per_trigger=_int_opt(opts, "maxoffsetspertrigger", 1),
        min_partitions=_int_opt(opts, "minpartitions", 1),
        fail_on_data_loss=_bool_opt(opts, "failondataloss", True),
        include_headers=_bool_opt(opts, "includeheaders", False),
        poll_timeout_ms=_int_opt(opts, "kafkaconsumer.polltimeoutms", 1) or 120_000,
        max_records_per_batch=_int_opt(opts, "maxrecordsperbatch", 1) or 10_000,
        consumer_kwargs=client_kwargs(options, "consumer"),
        ssl_options=ssl_options(options),
    )


_PREFIX_RE = re.compile(r"^[A-Za-z0-9._-]+$")


def parse_write_options(options: Mapping[str, str]) -> WriteOptions:
    """Validate the options of ``df.write`` / ``df.writeStream``.

    Raises:
        OptionError: naming the unknown or malformed option.
    """
    _check_known(options, _WRITE_OPTIONS, "write")
    opts = _lower(options)
    prefix = opts.get("transactionalidprefix", "aiokafka-spark")
    if not _PREFIX_RE.match(prefix):
        raise OptionError(
            f"option 'transactionalIdPrefix': only letters, digits, '.', '_', '-', got {prefix!r}"
        )
    kwargs = client_kwargs(options, "producer")
    exactly_once = _bool_opt(opts, "exactlyonce", False)
    if exactly_once and kwargs.get("enable_idempotence") is False:
        raise OptionError("option 'kafka.enable.idempotence' must not be false with exactlyOnce")
    topic = opts.get("topic")
    if topic is not None and not topic.strip():
        raise OptionError("option 'topic' is empty")
    return WriteOptions(
        topic=topic,
        exactly_once=exactly_once,
        transactional_id_prefix=prefix,
        producer_kwargs=kwargs,
        ssl_options=ssl_options(options),
    )
