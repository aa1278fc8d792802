"""What the fetcher does with each Fetch error: one table, no ``if`` chains.

No I/O and no asyncio. :class:`~aiokafka.consumer.fetcher.Fetcher` asks
:func:`partition_action` for a partition's error code and :func:`response_action` for
the response's top-level one, then runs the handler for the action (the producer
sender's :func:`~aiokafka.producer.outcome.classify` and librdkafka's
``rd_kafka_err_action`` do the same). Most codes are decided by the error classes'
flags (``retriable``, ``invalid_metadata``); the table lists only the codes whose
handling differs from what the flags say:

* ``OFFSET_OUT_OF_RANGE``: not an error to retry but a position to reset (or, from a
  preferred read replica lagging behind the leader, a reason to ask the leader).
* ``CORRUPT_MESSAGE``: retriable by Kafka's table, but fetching the same bytes again
  yields the same batch; the error is stored for the user, who may seek past it.
* ``FETCH_SESSION_ID_NOT_FOUND`` / ``INVALID_FETCH_SESSION_EPOCH``: the broker lost
  (or evicted) the KIP-227 session; the next fetch is a full one, right away.
"""

from __future__ import annotations

import enum

from aiokafka.errors import (
    CorruptRecordError,
    FetchSessionIdNotFound,
    InvalidFetchSessionEpoch,
    OffsetOutOfRangeError,
    for_code,
)

__all__ = [
    "CORRUPT_MESSAGE",
    "FETCH_SESSION_ID_NOT_FOUND",
    "INVALID_FETCH_SESSION_EPOCH",
    "OFFSET_OUT_OF_RANGE",
    "PartitionAction",
    "ResponseAction",
    "partition_action",
    "response_action",
]

OFFSET_OUT_OF_RANGE = OffsetOutOfRangeError.errno
CORRUPT_MESSAGE = CorruptRecordError.errno
FETCH_SESSION_ID_NOT_FOUND = FetchSessionIdNotFound.errno
INVALID_FETCH_SESSION_EPOCH = InvalidFetchSessionEpoch.errno


class PartitionAction(enum.Enum):
    """What to do with one partition of a Fetch response."""

    DATA = "data"  # no error: buffer the records
    OUT_OF_RANGE = "out-of-range"  # reset by auto_offset_reset, or raise with "none"
    FAIL = "fail"  # store the error; the user sees it once earlier records are taken
    RETRY = "retry"  # leader hint, else back off the partition
    RETRY_REFRESH = "retry-refresh"  # the same, and refresh metadata without a hint


class ResponseAction(enum.Enum):
    """What to do with a Fetch response's top-level error."""

    OK = "ok"
    SESSION_LOST = "session-lost"  # full fetch next, no back-off
    BACK_OFF = "back-off"  # back off the broker (and reset the session)


_PARTITION: dict[int, PartitionAction] = {
    0: PartitionAction.DATA,
    OFFSET_OUT_OF_RANGE: PartitionAction.OUT_OF_RANGE,
    CORRUPT_MESSAGE: PartitionAction.FAIL,
}

_RESPONSE: dict[int, ResponseAction] = {
    0: ResponseAction.OK,
    FETCH_SESSION_ID_NOT_FOUND: ResponseAction.SESSION_LOST,
    INVALID_FETCH_SESSION_EPOCH: ResponseAction.SESSION_LOST,
}


def partition_action(error_code: int) -> PartitionAction:
    """The action table for a Fetch partition error code.

    Leadership moved, topic recreated, epoch fenced, replica not ready: retriable
    codes are retried (with a metadata refresh when the class says the metadata is
    stale); authorization, unknown and other non-retriable codes fail the partition.
    """
    action = _PARTITION.get(error_code)
    if action is not None:
        return action
    cls = for_code(error_code)
    if not cls.retriable:
        return PartitionAction.FAIL
    return PartitionAction.RETRY_REFRESH if cls.invalid_metadata else PartitionAction.RETRY


def response_action(error_code: int) -> ResponseAction:
    """The action table for a Fetch response's top-level error code."""
    return _RESPONSE.get(error_code, ResponseAction.BACK_OFF)
