"""A string that never shows itself: passwords kept in configs and credentials.

Configs are frozen dataclasses, and ``repr()``, ``str()``, f-strings, logging and
:func:`dataclasses.asdict` all render every field. ``field(repr=False)`` would hide a
password from ``repr`` only; keeping it inside a :class:`Secret` hides it from all of
them, and the one way to read it, :meth:`Secret.get_secret_value`, is easy to find
wherever the clear value is used.
"""

from __future__ import annotations

from typing import Any, final

__all__ = ["Secret", "reveal"]

_MASK = "***"


@final
class Secret:
    """An immutable secret string, shown as ``'***'``.

    Equal to another :class:`Secret` with the same value (compared in constant
    time), hashable, and copied as itself (``copy``, ``deepcopy``,
    :func:`dataclasses.asdict`). Pickling keeps the value, as any serialization of
    a credential must, but no text form of the object ever contains it.

    Args:
        value: The clear text (a ``str``).

    Raises:
        TypeError: ``value`` is not a ``str``.
    """

    __slots__ = ("_value",)

    _value: str

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"a secret must be a str, got {type(value).__name__}")
        object.__setattr__(self, "_value", value)

    def get_secret_value(self) -> str:
        """Return the clear text; call it only where the value is used."""
        return self._value

    def __repr__(self) -> str:
        return f"Secret('{_MASK}')"

    def __str__(self) -> str:
        return _MASK

    def __format__(self, spec: str) -> str:
        return format(_MASK, spec)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        # Imported here for import cost only (hmac loads hashlib and OpenSSL's
        # bindings); hmac imports nothing from aiokafka.
        import hmac

        return hmac.compare_digest(
            self._value.encode("utf-8", "surrogatepass"),
            other._value.encode("utf-8", "surrogatepass"),
        )

    def __hash__(self) -> int:
        # str hashes are salted per process, so this reveals nothing portable.
        return hash((Secret, self._value))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Secret is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Secret is immutable")

    def __copy__(self) -> Secret:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Secret:
        return self

    def __reduce__(self) -> tuple[type[Secret], tuple[str]]:
        return (Secret, (self._value,))


def reveal(secret: Secret | None) -> str | None:
    """The clear text of ``secret``, or ``None``."""
    return None if secret is None else secret.get_secret_value()
