"""Loading the optional C extensions (``setup.py`` builds them when a compiler is there)."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["load_extension"]


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
