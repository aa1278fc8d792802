"""Pieces shared by the decoder and encoder emitters: type tables, defaults, code buffer."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from tools.codegen.spec import FieldSpec, MessageSpec, StructSpec

__all__ = ["FIXED", "Code", "ModuleCtx", "default_expr", "py_type", "struct_name"]

# Fixed-width primitives: struct format character and byte width.
FIXED: dict[str, tuple[str, int]] = {
    "bool": ("?", 1),
    "int8": ("b", 1),
    "int16": ("h", 2),
    "uint16": ("H", 2),
    "int32": ("i", 4),
    "uint32": ("I", 4),
    "int64": ("q", 8),
    "float64": ("d", 8),
    "uuid": ("16s", 16),
}

_SCALAR_PY = {
    "bool": "bool",
    "int8": "int",
    "int16": "int",
    "uint16": "int",
    "int32": "int",
    "uint32": "int",
    "int64": "int",
    "float64": "float",
    "uuid": "UUID",
    "string": "str",
    "bytes": "bytes",
    "records": "bytes | bytearray | memoryview",
}


def struct_name(fmt: str) -> str:
    """Module-level name of the precompiled ``struct.Struct`` for ``fmt``."""
    return "_S_" + fmt.replace("?", "o").replace("16s", "u")


@dataclass
class ModuleCtx:
    """State of one generated module: which precompiled structs it needs."""

    formats: set[str] = field(default_factory=set)

    def fmt(self, fmt: str) -> str:
        """Register ``fmt`` (without the ``>``) and return its module-level name."""
        self.formats.add(fmt)
        return struct_name(fmt)


def has_utf(msg: MessageSpec) -> bool:
    """Whether structs of ``msg`` carry ``unknown_tagged_fields`` (it has flexible versions)."""
    return not msg.flexible.empty and msg.flexible.lo <= msg.valid.hi


def py_type(f: FieldSpec, with_none: bool = True) -> str:
    """The Python annotation of a field."""
    if f.struct is not None:
        base = f.struct.class_name
    else:
        base = _SCALAR_PY[f.elem_type]
    if f.is_array:
        base = f"list[{base}]"
    if with_none and (f.ever_nullable or f.type == "records"):
        base += " | None"
    return base


def _int_default(f: FieldSpec) -> int:
    text = (f.default_text or "0").strip()
    return int(text, 0)


def default_expr(f: FieldSpec) -> str:
    """A Python expression producing a fresh default value of ``f``."""
    text = f.default_text
    if text == "null" or f.type == "records":
        return "None"
    if f.is_array:
        return "[]"
    if f.struct is not None:
        return f"{f.struct.class_name}()"
    t = f.type
    if t == "bool":
        return "True" if (text or "false").strip().lower() == "true" else "False"
    if t in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
        return repr(_int_default(f))
    if t == "float64":
        return repr(float(text)) if text else "0.0"
    if t == "string":
        return repr(text or "")
    if t == "bytes":
        return 'b""'
    if t == "uuid":
        return "ZERO_UUID"
    raise ValueError(f"no default for {f.name}: {t}")


def is_mutable_default(f: FieldSpec) -> bool:
    """Whether the dataclass field needs a ``default_factory``."""
    return default_expr(f) not in ("None",) and (f.is_array or f.struct is not None)


class Code:
    """An indented code buffer with a per-function fresh-name counter."""

    def __init__(self, indent: int = 1) -> None:
        self.lines: list[str] = []
        self.level = indent
        self._n = 0

    def var(self, base: str) -> str:
        """A fresh local name."""
        self._n += 1
        return f"{base}{self._n}"

    def __call__(self, line: str) -> None:
        self.lines.append("    " * self.level + line)

    @contextmanager
    def block(self, header: str) -> Iterator[None]:
        """Emit ``header`` and indent the lines emitted inside the ``with``."""
        self(header)
        self.level += 1
        try:
            yield
        finally:
            self.level -= 1

    def text(self) -> str:
        """The emitted lines."""
        return "\n".join(self.lines)


def fields_of(st: StructSpec) -> list[FieldSpec]:
    """The fields of ``st`` in declaration order."""
    return st.fields
