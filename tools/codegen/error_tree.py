"""Draw the exception tree of ``aiokafka/errors.py``'s docstring from the error tables.

Every class in the tree is in a table already: the per-code classes in Kafka's
``errors.json`` (with ``tools/codegen/errors.py``'s names, parents and flags), the
client-side ones in ``tools/codegen/client_errors.py``. Only the few hand-written
classes are placed here. The drawing is generated into ``aiokafka/_gen/error_names.py``
(``ERROR_TREE``), which ``aiokafka/errors.py`` appends to its docstring, so a new
error code shows up in the tree with no hand edit; ``tests/unit/test_errors.py``
draws it again from the loaded classes and compares.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.codegen import client_errors
from tools.codegen.errors import TRANSACTION_FATAL, ErrorSpec, parents_of

# The hand-written classes (aiokafka/_errors_base.py, aiokafka/_error_table.py) below
# KafkaError: name -> (parent, own errno). They set no flag of their own.
HAND_WRITTEN: dict[str, tuple[str, int | None]] = {
    "BrokerResponseError": ("KafkaError", None),
    "AuthorizationError": ("BrokerResponseError", None),
    "NoError": ("BrokerResponseError", 0),
    "UnrecognizedErrorCode": ("UnknownError", None),
    "LogTruncationError": ("OffsetOutOfRangeError", None),
    "IncompatibleBrokerVersion": ("UnsupportedVersionError", None),
}
ROOT = "KafkaError (RuntimeError)"
FLAG_ORDER = "RMF"


@dataclass(frozen=True)
class _Node:
    parent: str
    errno: int | None
    flags: str  # set on the class itself
    explicit: bool  # all three flags set on the class (a per-code class): none inherited
    aliases: tuple[str, ...] = ()


def _nodes(specs: list[ErrorSpec]) -> dict[str, _Node]:
    nodes = {name: _Node(p, errno, "", False) for name, (p, errno) in HAND_WRITTEN.items()}
    for e in client_errors.CLIENT_ERRORS:
        nodes[e.name] = _Node(e.base, None, e.flags, False)
    parents = parents_of(specs)
    for s in specs:
        flags = ("R" if s.retriable else "") + ("M" if s.invalid_metadata else "")
        flags += "F" if s.name in TRANSACTION_FATAL else ""
        nodes[s.class_name] = _Node(parents[s.class_name], s.code, flags, True, s.aliases)
    return nodes


def render_tree(specs: list[ErrorSpec]) -> list[str]:
    """The tree's lines: ``[code flags]`` per class, ``= Name`` per alias (the format
    the module docstring explains)."""
    nodes = _nodes(specs)
    children: dict[str, list[str]] = {}
    for name, node in nodes.items():
        children.setdefault(node.parent, []).append(name)

    def flags(name: str) -> set[str]:
        node = nodes.get(name)
        if node is None:  # KafkaError
            return set()
        return set(node.flags) | (set() if node.explicit else flags(node.parent))

    def label(name: str) -> str:
        errno = nodes[name].errno
        parts = [] if errno is None else [str(errno)]
        parts += [f for f in FLAG_ORDER if f in flags(name)]
        return f"{name} [{' '.join(parts)}]" if parts else name

    def key(name: str) -> tuple[int, int, str]:
        errno = nodes[name].errno
        return (0, errno, "") if errno is not None else (1, 0, name)

    lines = [ROOT]

    def walk(name: str, prefix: str) -> None:
        kids = sorted(children.get(name, []), key=key)
        for i, kid in enumerate(kids):
            last = i == len(kids) - 1
            lines.append(f"{prefix}{'`-- ' if last else '+-- '}{label(kid)}")
            inner = prefix + ("    " if last else "|   ")
            bar = "|   " if children.get(kid) else "    "
            lines.extend(f"{inner}{bar}  = {alias}" for alias in sorted(nodes[kid].aliases))
            walk(kid, inner)

    walk("KafkaError", "")
    return lines
