"""Exceptions raised by aiokafka, and the Kafka error-code table.

Every exception aiokafka raises on purpose derives from :class:`KafkaError`. Errors
that a broker reports as an error code are :class:`BrokerResponseError` subclasses, one
class per code of Kafka's protocol (generated from Kafka's own table);
:func:`for_code` maps a code to its class. Errors the client detects itself
(connection lost, deadline passed, corrupt bytes, closed producer, ...) are the
other subclasses, generated from a table of their own (``tools/codegen/
client_errors.py``) in the same shape. The broker classes are defined when first read
from this module (or at the first :func:`for_code` call), not when it is imported;
every name is listed in ``__all__`` and ``dir()`` all the same.

Class attributes say what to do, so retry code reads flags instead of listing classes:
``retriable`` (sending again may succeed), ``invalid_metadata`` (refresh metadata
first), ``transaction_fatal`` (a transactional producer must be closed; see
:func:`transaction_error_kind`), ``errno`` (the protocol code or ``None``) and
``message`` (the default text, shown when the exception is raised without arguments).

The tree below marks each broker class with ``[code flags]``, where the flags are
``R`` retriable, ``M`` invalid_metadata and ``F`` transaction_fatal; ``= Name`` lists
other names of the same class. It is drawn from the error tables when they are
generated (``tools/codegen/error_tree.py``, into ``aiokafka/_gen/error_names.py``) and
appended to this docstring at import; ``tests/unit/test_errors.py`` checks it against
the classes::
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

from aiokafka._errors_base import (
    AuthorizationError,
    BrokerResponseError,
    KafkaError,
    NoError,
    TransactionErrorKind,
    transaction_error_kind,
)
from aiokafka._gen import client_errors as _client
from aiokafka._gen.client_errors import *  # noqa: F403 - the errors the client detects
from aiokafka._gen.error_names import ERROR_NAMES, ERROR_TREE

if TYPE_CHECKING:
    from aiokafka._error_table import (
        IncompatibleBrokerVersion,
        LogTruncationError,
        UnrecognizedErrorCode,
    )
    from aiokafka._error_table import (
        kafka_errors as kafka_errors,
    )
    from aiokafka._gen import error_codes as _codes
    from aiokafka._gen.error_codes import *  # noqa: F403 - the generated per-code classes

if __doc__ is not None:  # None under python -OO
    __doc__ += ERROR_TREE

__all__ = [
    "AuthorizationError",
    "BrokerResponseError",
    "IncompatibleBrokerVersion",
    "KafkaError",
    "LogTruncationError",
    "NoError",
    "TransactionErrorKind",
    "UnrecognizedErrorCode",
    "for_code",
    "transaction_error_kind",
]
# The errors the client detects itself, generated from one table (tools/codegen/
# client_errors.py) in the same shape as the per-code classes.
__all__ += _client.__all__
# The generated per-code classes (and ERROR_CLASSES), by name: the table itself loads
# on first use (see __getattr__ below).
if TYPE_CHECKING:
    __all__ += _codes.__all__
else:
    __all__ += ERROR_NAMES


# -- code lookup --------------------------------------------------------------------
#
# The broker error classes (one per protocol code, generated), the three classes
# derived from them (LogTruncationError, IncompatibleBrokerVersion,
# UnrecognizedErrorCode) and kafka_errors live in aiokafka/_error_table.py, which
# loads on first use (issue 14): the first read of one of these names here (PEP 562;
# the value then stays in this module) or the first for_code() call. A program that
# imports the clients but never sees a broker error does not define 128 classes.


def _error_table() -> ModuleType:
    return importlib.import_module("aiokafka._error_table")


def for_code(error_code: int) -> type[BrokerResponseError]:
    """Return the exception class for a protocol error code.

    Args:
        error_code: The error code from a response (an int16).

    Returns:
        The class for ``error_code``. Code 0 gives :class:`NoError`, which cannot be
        instantiated: check for success first. A code missing from the table (e.g.
        from a newer broker) gives a cached subclass of :class:`UnrecognizedErrorCode`
        (hence of :class:`UnknownError`) whose ``errno`` is ``error_code``.

    Raises:
        TypeError: ``error_code`` is not an int.
        ValueError: ``error_code`` is outside the int16 range.
    """
    return _error_table().for_code(error_code)  # type: ignore[no-any-return]


def __getattr__(name: str) -> Any:
    # Dunder look-ups (the import system asks for __path__) never load the table.
    if name.startswith("__") or not hasattr(table := _error_table(), name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(table, name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def _adopt_classes() -> None:
    # Show the classes defined in the private modules as aiokafka.errors.X in
    # tracebacks and docs; pickle finds them there too, since this module exports them.
    # (aiokafka/_error_table.py adopts the classes it defines or loads.)
    for name in __all__:
        obj = globals().get(name)  # the table's names are not loaded yet
        if isinstance(obj, type) and obj.__module__ != __name__:
            obj.__module__ = __name__


_adopt_classes()
