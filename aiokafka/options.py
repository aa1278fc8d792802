"""From a client constructor's explicit keyword parameters to its options.

Each client constructor (producer, consumer, admin, ``AIOKafkaClient``) declares every
option as a typed keyword-only parameter, so ``inspect.signature()``, ``help()``, IDEs
and mypy see names, types and defaults. The defaults repeat those of the config
dataclasses (``tests/unit/test_constructor_signatures.py`` fails if one drifts); the
config classes stay the one place that validates and resolves them.

The constructors end with ``**configs: Never``: a static checker rejects any other
keyword, and at run time :func:`reject_unknown` raises
:class:`~aiokafka.net.config.InvalidOptionError` naming the closest option, as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from aiokafka.net.config import unknown_option

__all__ = ["RESOLVED", "given", "reject_unknown"]


class _Resolved:
    """The default of an option whose value the config derives from other options
    (the producer's ``acks``, ``enable_idempotence``, ``delivery_timeout_ms``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<resolved from the other options>"


#: Default of a parameter left for the config class to resolve: not passed on.
RESOLVED: Final[Any] = _Resolved()

# Names in a constructor's locals() that are not options.
_NOT_OPTIONS = frozenset({"self", "topics", "configs", "config", "__class__"})


def reject_unknown(owner: str, configs: Mapping[str, Any], known: Iterable[str]) -> None:
    """Raise for the first keyword that is not a declared parameter.

    Raises:
        aiokafka.net.config.InvalidOptionError: naming it and the closest option.
    """
    for name in configs:
        raise unknown_option(owner, name, known)


def given(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The options among a constructor's ``locals()`` (read first thing in it), without
    those left at :data:`RESOLVED`."""
    return {
        name: value
        for name, value in arguments.items()
        if name not in _NOT_OPTIONS and value is not RESOLVED
    }
