"""What the producer does with a batch after its partition's Produce result: the
action table of the error codes (no asyncio; the sender acts on it):

* success / DUPLICATE_SEQUENCE_NUMBER: resolve the record futures.
* OUT_OF_ORDER_SEQUENCE_NUMBER / UNKNOWN_PRODUCER_ID: if the batch is the first
  unacknowledged one of its partition the broker lost its state: bump the epoch
  (KIP-360) and retry with fresh sequences; otherwise an earlier batch is missing
  and the retry in order fixes it. (aiokafka treated these as fatal and stalled.)
* retriable errors: retry after ``retry_backoff_ms`` until ``delivery_timeout_ms``;
  invalid-metadata errors first apply the KIP-951 leader hint or refresh metadata.
* MESSAGE_TOO_LARGE / RECORD_LIST_TOO_LARGE for a batch of several records: split it
  (:meth:`~aiokafka.producer.accumulator.RecordAccumulator.split`) and send the
  parts, which keep its sequences.
* anything else: fail only that batch's futures with the typed error.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from aiokafka.errors import KafkaTimeoutError, for_code

if TYPE_CHECKING:
    from aiokafka.producer.batch import ProducerBatch

__all__ = ["TOO_LARGE", "Outcome", "classify", "timeout_error"]

_DUPLICATE_SEQUENCE = 46
_OUT_OF_ORDER_SEQUENCE = 45
_UNKNOWN_PRODUCER_ID = 59
#: MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE: the batch is split and sent again.
TOO_LARGE = frozenset({10, 18})


class Outcome(enum.Enum):
    """What to do with a batch after its partition's result."""

    SUCCESS = "success"
    SEQUENCE_CHECK = "sequence-check"  # out of order / unknown producer id
    RETRY = "retry"
    RETRY_REFRESH = "retry-refresh"  # retry after new metadata
    FAIL = "fail"


def classify(error_code: int, idempotent: bool) -> Outcome:
    """The action table for a Produce partition error code."""
    if error_code == 0:
        return Outcome.SUCCESS
    if error_code == _DUPLICATE_SEQUENCE and idempotent:
        # The broker has this batch already (sent before a lost response).
        return Outcome.SUCCESS
    if error_code in (_OUT_OF_ORDER_SEQUENCE, _UNKNOWN_PRODUCER_ID) and idempotent:
        return Outcome.SEQUENCE_CHECK
    cls = for_code(error_code)
    if cls.retriable:
        return Outcome.RETRY_REFRESH if cls.invalid_metadata else Outcome.RETRY
    return Outcome.FAIL


def timeout_error(batch: ProducerBatch, delivery_timeout_ms: int) -> KafkaTimeoutError:
    """The error of a batch not delivered within ``delivery_timeout_ms``, caused by
    its last attempt's error."""
    cause = batch.last_error
    why = "no error recorded" if cause is None else str(cause)  # str() names the class
    err = KafkaTimeoutError(
        f"{batch.record_count} record(s) for {batch.tp.topic}-{batch.tp.partition} not "
        f"delivered within delivery_timeout_ms ({delivery_timeout_ms} ms): "
        f"{why} (attempts: {batch.attempts})"
    )
    err.__cause__ = cause
    return err
