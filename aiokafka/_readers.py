"""Read-only public attributes that show a private slot: ``x = slot_reader("_x", int, doc)``.

Many classes expose header fields or state as read-only attributes. Written as
``@property`` each is four lines of the same code and a Python frame per read; this is
one declaration per attribute, read by a C getter (``operator.attrgetter``), typed for
mypy by :class:`Reader`. Use it only for a plain read of one slot: an attribute that
computes something stays a ``property``.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Generic, Protocol, TypeVar, overload

__all__ = ["Reader", "slot_reader"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Reader(Protocol, Generic[T_co]):
    """What :func:`slot_reader` returns, as mypy sees it: a read-only descriptor."""

    @overload
    def __get__(self, obj: None, owner: type[Any] | None = None) -> Reader[T_co]: ...

    @overload
    def __get__(self, obj: object, owner: type[Any] | None = None) -> T_co: ...


def slot_reader(slot: str, kind: type[T], doc: str) -> Reader[T]:
    """A read-only attribute whose value is ``self.<slot>``.

    Args:
        slot: The private attribute (usually a ``__slots__`` entry) to read.
        kind: The value's type, for the type checker only.
        doc: The attribute's docstring.

    Returns:
        A ``property`` whose getter is ``attrgetter(slot)``: no Python frame per read.
    """
    del kind  # only the annotation uses it
    reader: Reader[T] = property(attrgetter(slot), doc=doc)  # type: ignore[assignment]
    return reader
