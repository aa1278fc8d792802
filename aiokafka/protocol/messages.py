"""Every generated Kafka message class, and the request/response classes by API key.

``from aiokafka.protocol.messages import ApiVersionsRequest, MetadataRequest``.

Struct classes whose name is unique across all APIs are exported under that name. A
name used by several APIs with different fields (``PartitionData`` in Fetch and in the
share-group APIs, ...) is exported qualified by the message that defines it, e.g.
``FetchRequestPartitionData``; the unqualified class is in its API's module under
:mod:`aiokafka.protocol._gen`.

Nothing is imported until it is used: the generated modules are large (compiling them
all took ~0.5 s of every ``import aiokafka`` without cached bytecode), and a client
uses a handful of APIs. A name is resolved through the generated table in
``_gen/_index.py`` the first time it is read (module ``__getattr__``, PEP 562) and then
kept in this module's namespace, so later reads are plain attribute reads.
``REQUEST_TYPES``/``RESPONSE_TYPES`` load an API's module the first time its key is
looked up. Type checkers read ``_gen/_all.py``, which imports every class.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from aiokafka.protocol._gen import _index

if TYPE_CHECKING:
    from aiokafka.protocol._gen._all import *  # noqa: F403

__all__ = sorted([*_index.NAMES, "REQUEST_TYPES", "RESPONSE_TYPES"])

_PKG = "aiokafka.protocol._gen."


def _load(module: str, name: str) -> type[Any]:
    # __import__ (not importlib.import_module) so that ``python -X importtime`` shows
    # the module under the import that first used it.
    path = _PKG + module
    __import__(path)
    cls: type[Any] = getattr(sys.modules[path], name)
    return cls


class _TypesByKey(Mapping[int, type[Any]]):
    """API key -> generated request (or response) class, importing a module on the
    first lookup of its key. Iterating the values loads every API."""

    __slots__ = ("_loaded", "_where")

    def __init__(self, where: dict[int, tuple[str, str]]) -> None:
        self._where = where
        self._loaded: dict[int, type[Any]] = {}

    def __getitem__(self, api_key: int) -> type[Any]:
        try:
            return self._loaded[api_key]
        except KeyError:
            cls = self._loaded[api_key] = _load(*self._where[api_key])
            return cls

    def __iter__(self) -> Iterator[int]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, api_key: object) -> bool:
        return api_key in self._where

    def __repr__(self) -> str:
        return f"<{len(self._where)} API classes by key, {len(self._loaded)} loaded>"


REQUEST_TYPES: Mapping[int, type[Any]] = _TypesByKey(_index.REQUESTS)
RESPONSE_TYPES: Mapping[int, type[Any]] = _TypesByKey(_index.RESPONSES)

if not TYPE_CHECKING:
    # Hidden from type checkers so that a misspelt name is still an error for them.

    def __getattr__(name: str) -> type[Any]:
        try:
            where = _index.NAMES[name]
        except KeyError:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        cls = globals()[name] = _load(*where)
        return cls

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
