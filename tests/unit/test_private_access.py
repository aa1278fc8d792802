"""No module reads or writes another module's private attributes (issue 16).

A leading underscore marks a name as its module's business. Speed work is tempted to
reach into another object's ``_state`` or ``_recs`` instead of asking it, and then two
modules own one piece of state. This test reads every hand-written module's syntax tree
(nothing is imported) and lists each ``obj._name`` where ``obj`` is not ``self`` or
``cls`` and ``_name`` is not defined in the same module: not a class, function, slot or
attribute that module declares or assigns.

So a class may still read its own attributes on another instance of itself (``__eq__``
comparing ``other._key``, a clone filling ``new._base_offset``), and a module may call
its own private helpers through a class (``ConfigDescription._resource``). The
namedtuple API (``_replace``, ``_fields``, ...) is public despite its underscore.

The C extensions are the C halves of the classes they accelerate and are not read here;
each says in its header which Python attributes it reads.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "aiokafka"

#: namedtuple's public methods and attributes.
NAMEDTUPLE_API = frozenset({"_asdict", "_field_defaults", "_fields", "_make", "_replace"})


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _defined(tree: ast.Module) -> set[str]:
    """The names a module defines: classes, functions, assigned names and attributes,
    and string constants (``__slots__`` entries, ``getattr`` names)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                names.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
    return names


def foreign_private_uses(source: str) -> list[tuple[int, str]]:
    """``(line, expression)`` of each private attribute ``source`` uses on an object
    other than ``self``/``cls`` without defining that name itself."""
    tree = ast.parse(source)
    own = _defined(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not _private(node.attr):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        if node.attr in NAMEDTUPLE_API or node.attr in own:
            continue
        found.append((node.lineno, ast.unparse(node)))
    return sorted(found)


def test_no_module_uses_another_modules_private_attributes() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_gen" in path.relative_to(PACKAGE).parts:
            continue  # generated: the codec's own internals
        for line, expr in foreign_private_uses(path.read_text(encoding="utf-8")):
            offenders.append(f"{path.relative_to(ROOT)}:{line}: {expr}")
    assert offenders == [], "\n".join(offenders)


def test_the_check_finds_a_read_a_write_and_a_module_private_call() -> None:
    source = (
        "from aiokafka.consumer import fetch_records\n"
        "def peek(chunk):\n"
        "    return chunk._recs[chunk._recs_idx]\n"
        "def bump(state):\n"
        "    state._position += 1\n"
        "def helper():\n"
        "    return fetch_records._load()\n"
    )
    assert foreign_private_uses(source) == [
        (3, "chunk._recs"),
        (3, "chunk._recs_idx"),
        (5, "state._position"),
        (7, "fetch_records._load"),
    ]


def test_the_check_allows_own_instances_and_namedtuple_methods() -> None:
    source = (
        "class Key:\n"
        "    __slots__ = ('_value',)\n"
        "    def __eq__(self, other):\n"
        "        return self._value == other._value\n"
        "    def copy(self):\n"
        "        new = Key.__new__(Key)\n"
        "        new._value = self._value\n"
        "        return new\n"
        "def moved(tp):\n"
        "    return tp._replace(partition=1)._fields\n"
    )
    assert foreign_private_uses(source) == []
