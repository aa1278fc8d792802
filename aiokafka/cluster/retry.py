"""The client's single retry policy, driven by the error table.

What to do about an error is read from the error classes' flags (``retriable``,
``invalid_metadata``) plus a small table of extra actions for specific classes,
instead of ``if`` chains at every call site (librdkafka's ``rd_kafka_err_action``).
The loop itself lives in :meth:`aiokafka.cluster.AIOKafkaClient.call_with_retry`;
this module decides, without I/O.
"""

from __future__ import annotations

import enum

from aiokafka.errors import (
    CoordinatorNotAvailableError,
    KafkaConnectionError,
    KafkaError,
    NotControllerError,
    NotCoordinatorError,
    RequestTimedOutError,
)

__all__ = ["Action", "action_for"]


class Action(enum.Flag):
    """What the retry loop does after an error (combinable)."""

    FAIL = 0
    RETRY = enum.auto()
    REFRESH_METADATA = enum.auto()
    FIND_COORDINATOR = enum.auto()


# Actions beyond what the flags say; looked up along the exception's MRO.
_EXTRA: dict[type[KafkaError], Action] = {
    # The coordinator moved or is not up: look it up again before retrying.
    NotCoordinatorError: Action.FIND_COORDINATOR,
    CoordinatorNotAvailableError: Action.FIND_COORDINATOR,
    # The controller moved; the next metadata response names the new one.
    NotControllerError: Action.REFRESH_METADATA,
    # A dead connection may have been the coordinator's.
    KafkaConnectionError: Action.FIND_COORDINATOR,
    RequestTimedOutError: Action.FIND_COORDINATOR,
}


def action_for(exc: BaseException) -> Action:
    """Return the actions for ``exc``; ``Action.FAIL`` means re-raise.

    Non-Kafka exceptions (bugs, ``ValueError`` at the API edge) and non-retriable
    Kafka errors (authentication, authorization, unsupported version, ...) fail
    immediately.
    """
    if not isinstance(exc, KafkaError) or not exc.retriable:
        return Action.FAIL
    action = Action.RETRY
    if exc.invalid_metadata:
        action |= Action.REFRESH_METADATA
    for cls in type(exc).__mro__:
        extra = _EXTRA.get(cls)
        if extra is not None:
            action |= extra
            break
    return action
