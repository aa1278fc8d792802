"""Loading modules on demand: the optional C extensions (``setup.py`` builds them when
a compiler is there), and the packages' public names imported on first use (PEP 562).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, TypeVar

__all__ = ["compiled_or", "lazy_exports", "load_extension"]

T = TypeVar("T")


def load_extension(name: str) -> ModuleType | None:
    """The compiled module ``name``, or ``None`` when ``AIOKAFKA_NO_EXTENSIONS`` is set
    (to anything but ``0``) or the module was not built: the caller then takes its
    pure-Python path. Read once, at the caller's import."""
    if os.environ.get("AIOKAFKA_NO_EXTENSIONS", "") not in ("", "0"):
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def compiled_or(module: str, name: str, fallback: T) -> T:
    """``name`` from the compiled ``module``, or ``fallback`` (its pure-Python twin,
    same interface) where :func:`load_extension` gives no module.

    A base class chosen this way is hidden from type checkers (``if TYPE_CHECKING:
    base = fallback``), which take a class from a call for a variable, not a type.
    """
    ext = load_extension(module)
    return fallback if ext is None else getattr(ext, name)


def lazy_exports(
    package: str, lazy: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The PEP 562 ``__getattr__`` and ``__dir__`` of ``package``, whose public name
    ``name`` is defined in its submodule ``lazy[name]``, imported on first use.

    ``namespace`` is the package's ``globals()``: a name once imported is stored there,
    so later look-ups find it without calling ``__getattr__``.
    """

    def __getattr__(name: str) -> Any:
        module = lazy.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *lazy})

    return __getattr__, __dir__
