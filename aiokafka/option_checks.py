"""The rules every client's configuration shares, in one place: the error for an
unknown or mistyped option (:class:`InvalidOptionError`), the checks the config
classes make (:func:`check_int`, :func:`secret_option`, :func:`unknown_option`) and
the default ``client_id``.

The producer, consumer, admin and cluster configs and the connection config
(:mod:`aiokafka.net.config`, which re-exports these names) all use them. Light on
purpose: the constructors' signatures import this module (``DEFAULT_CLIENT_ID``).
"""

from __future__ import annotations

from collections.abc import Iterable

from aiokafka import __version__
from aiokafka.net.secret import Secret

__all__ = [
    "DEFAULT_CLIENT_ID",
    "InvalidOptionError",
    "check_int",
    "secret_option",
    "unknown_option",
]

#: The ``client_id`` of every client that is not given one (the producer's is
#: ``"aiokafka-producer"``, as in aiokafka).
DEFAULT_CLIENT_ID = f"aiokafka-{__version__}"


class InvalidOptionError(ValueError, TypeError):
    """A client option is unknown, or its value has the wrong type.

    Both a ``ValueError`` (a bad configuration is a bad value, which is what
    callers validating settings catch) and a ``TypeError`` (what Python raises for
    an unexpected keyword, and what aiokafka 0.x raised, so existing ``except
    TypeError`` code keeps working).

    Attributes:
        option: The option's name.
        suggestion: For an unknown option, the closest valid name, or ``None``.
    """

    def __init__(self, message: str, option: str, suggestion: str | None = None) -> None:
        super().__init__(message)
        self.option = option
        self.suggestion = suggestion

    def __reduce__(self) -> tuple[type[InvalidOptionError], tuple[str, str, str | None]]:
        # Keep the extra attributes through pickling (e.g. across processes).
        return (type(self), (str(self), self.option, self.suggestion))


def unknown_option(owner: str, name: str, known: Iterable[str]) -> InvalidOptionError:
    """The error for an unknown keyword ``name`` of ``owner``, suggesting the closest
    of ``known`` (a typo such as ``lingerms`` names ``linger_ms``)."""
    import difflib  # for import cost only: needed to word an error

    close = difflib.get_close_matches(str(name), sorted(known), n=1, cutoff=0.6)
    suggestion = close[0] if close else None
    hint = f"; did you mean {suggestion!r}?" if suggestion else ""
    return InvalidOptionError(f"{owner} got an unknown option {name!r}{hint}", name, suggestion)


def check_int(name: str, value: object, low: int, high: int | None = None) -> None:
    """Raise :class:`InvalidOptionError`/``ValueError`` naming ``name`` unless
    ``low <= value <= high``."""
    # bool is an int subclass; True as a timeout is a mistake, not 1 ms.
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidOptionError(f"{name} must be an int, got {type(value).__name__}", name)
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {bound}, got {value}")


def secret_option(name: str, value: object) -> Secret | None:
    """Keep option ``name`` as a :class:`~aiokafka.net.secret.Secret`: a ``str`` is
    wrapped, a ``Secret`` or ``None`` kept.

    Raises:
        InvalidOptionError: any other type (the message names the option and the type,
            never the value, which may be a secret passed by mistake).
    """
    if value is None or isinstance(value, Secret):
        return value
    if isinstance(value, str):
        return Secret(value)
    raise InvalidOptionError(f"{name} must be a str or None, got {type(value).__name__}", name)
