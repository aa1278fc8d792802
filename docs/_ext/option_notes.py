"""What the config reference says where the config classes' docstrings say nothing.

The reference (``docs/_ext/config_reference.py``) takes each option's meaning from
the ``Attributes:`` section of its config class (``ProducerConfig``,
``ClientConfig``, ``ConnectionConfig``) and falls back to :data:`MEANINGS` only for
options those docstrings do not describe (today: the consumer's own options, since
``ConsumerConfig`` documents none of them). A docstring entry always wins, so moving
a meaning into the code retires its line here. An option described nowhere, or a
line here for an option no client takes, fails the docs build.

:data:`APPENDED` adds to a docstring's meaning that refers to text the reference does
not show. :data:`DEFAULTS` and :data:`TYPES` spell out defaults and types that the dataclass
cannot show (a sentinel resolved at construction, ``Any``).
"""

from __future__ import annotations

MEANINGS: dict[str, str] = {
    "group_id": (
        "Name of the consumer group to join. With it, ``subscribe()`` lets the group "
        "assign partitions and offsets can be committed; ``None`` consumes without a "
        "group (``assign()``, or ``subscribe()`` of every partition) and without commits."
    ),
    "group_instance_id": (
        "Static membership (KIP-345): a stable id per consumer instance. A restarted "
        "member with the same id gets its partitions back without a rebalance, if it "
        "returns within ``session_timeout_ms``; a static member does not send "
        "LeaveGroup on ``stop()``. Needs ``group_id``."
    ),
    "key_deserializer": (
        "Turns a record key's bytes into the object ``ConsumerRecord.key`` holds; "
        "``None`` keeps bytes. Not called for ``None`` keys."
    ),
    "value_deserializer": (
        "Turns a record value's bytes into the object ``ConsumerRecord.value`` holds; "
        "``None`` keeps bytes. Not called for ``None`` values (tombstones)."
    ),
    "fetch_max_wait_ms": (
        "How long the broker may hold a Fetch that has less than ``fetch_min_bytes`` "
        "to return. Must be lower than ``request_timeout_ms``."
    ),
    "fetch_min_bytes": (
        "Bytes a Fetch response should hold before the broker answers (it answers "
        "earlier after ``fetch_max_wait_ms``). Raise it to trade latency for fewer, "
        "larger responses."
    ),
    "fetch_max_bytes": (
        "Upper bound of one Fetch response, over all its partitions. A batch larger "
        "than this is still returned when it is the first one, so the consumer "
        "always makes progress."
    ),
    "max_partition_fetch_bytes": (
        "Upper bound of the data one Fetch response returns for one partition."
    ),
    "max_poll_records": (
        "Most records one ``getmany()`` returns over all partitions; ``None`` for no limit."
    ),
    "max_poll_interval_ms": (
        "Longest pause allowed between two reads (``getone``, ``getmany``, "
        "``async for``) of a group member; past it the member leaves the group so "
        "that its partitions go to a member that is making progress."
    ),
    "auto_offset_reset": (
        "Where to start a partition with no committed offset, or whose position is "
        'out of range: ``"earliest"``, ``"latest"``, or ``"none"`` (raise '
        ":class:`~aiokafka.errors.OffsetOutOfRangeError` / "
        ":class:`~aiokafka.errors.NoOffsetForPartitionError` instead)."
    ),
    "enable_auto_commit": (
        "Commit the consumed positions every ``auto_commit_interval_ms`` in the "
        "background, before a rebalance revokes partitions, and on ``stop()``. "
        "Turn it off to commit with ``commit()`` after processing."
    ),
    "auto_commit_interval_ms": "Period of the background commits of ``enable_auto_commit``.",
    "check_crcs": "Verify the CRC-32C of every fetched record batch.",
    "isolation_level": (
        '``"read_uncommitted"`` returns every record; ``"read_committed"`` '
        "returns records of committed transactions only, and reads no further than "
        "the last stable offset."
    ),
    "session_timeout_ms": (
        "Classic protocol: how long the group coordinator waits for a heartbeat "
        "before it removes the member and rebalances."
    ),
    "heartbeat_interval_ms": (
        "Classic protocol: period of the heartbeats to the group coordinator. Must be "
        "lower than ``session_timeout_ms`` (a third of it is usual)."
    ),
    "rebalance_timeout_ms": (
        "Classic protocol: how long the coordinator waits for every member to rejoin "
        "during a rebalance (the time the rebalance listener has). ``None`` means "
        "``session_timeout_ms``, as in aiokafka."
    ),
    "consumer_timeout_ms": (
        "Accepted and validated for compatibility with aiokafka (where it bounded the "
        "fetcher's idle wait); this fetcher is woken by events and does not use it."
    ),
    "partition_assignment_strategy": (
        "Classic protocol: the client-side assignors the group may choose from, in "
        "order of preference; a group uses the first one all members support. "
        "``CooperativeStickyAssignor`` makes rebalances cooperative (KIP-429)."
    ),
    "exclude_internal_topics": (
        "Keep internal topics (``__consumer_offsets``, ``__transaction_state``) out "
        "of pattern subscriptions."
    ),
    "group_protocol": (
        '``"classic"`` (JoinGroup/SyncGroup, client-side assignors) or '
        '``"consumer"`` (KIP-848: the broker assigns and rebalances are '
        "incremental; Kafka 4.0+)."
    ),
    "group_remote_assignor": (
        '``group_protocol="consumer"`` only: the broker-side assignor to ask for '
        '(``"uniform"`` or ``"range"`` on Kafka 4.x); ``None`` lets the broker choose.'
    ),
    "send_backoff_ms": "Accepted for compatibility with aiokafka; not used.",
    "loop": (
        "Deprecated and ignored, with a ``DeprecationWarning`` (as aiokafka): the client "
        "runs on the event loop running when it starts."
    ),
}

#: Appended to a docstring's meaning that points at text the reference does not show.
APPENDED: dict[str, str] = {
    "enable_idempotence": (
        "Idempotence (KIP-679): the broker drops a retried batch it already wrote and "
        "keeps each partition's records in order, using a producer id and sequence "
        "numbers. Unset means on, unless ``acks`` other than all or "
        "``max_in_flight_requests_per_connection`` above 5 is given (then off, as in "
        "the Java client); ``True`` with such an option is a ``ValueError``; "
        "``transactional_id`` requires it."
    ),
}

DEFAULTS: dict[str, str] = {
    "acks": '``"all"`` (stored as ``-1``)',
    "enable_idempotence": (
        "on, unless ``acks`` other than all or "
        "``max_in_flight_requests_per_connection`` above 5 is given"
    ),
    "delivery_timeout_ms": "``max(120000, linger_ms + request_timeout_ms)``",
}

TYPES: dict[str, str] = {
    "acks": 'int | str ("all", -1, 0, 1)',
    "enable_idempotence": "bool",
    "delivery_timeout_ms": "int",
    "loop": "asyncio.AbstractEventLoop | None",
}
