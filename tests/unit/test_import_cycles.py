"""No import inside a function hides an import cycle.

Modules import what they may never use inside the function that uses it, so that
``import aiokafka`` stays cheap (issue 14). Such an import must not be the way round a
cycle: if module A imports B inside a function and B imports A at module level (directly
or through other modules' module-level imports), the two depend on each other and the
function-level import only hides it from whoever reads A's header. This test reads every
module's imports from its syntax tree (nothing is imported) and lists the cycles found.

Package ``__init__`` re-exports are not followed: importing ``aiokafka.consumer.fetcher``
runs ``aiokafka/consumer/__init__.py`` first, but by the time a function of
``aiokafka.consumer.consumer`` runs, that package is imported already.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "aiokafka"


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _targets(module: str, node: ast.Import | ast.ImportFrom, modules: dict[str, Path]) -> set[str]:
    """The package modules ``node`` (in ``module``) imports."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".")
            if modules[module].name != "__init__.py":
                package = package[:-1]
            package = package[: len(package) - (node.level - 1)]
            base = ".".join([*package, base] if base else package)
        names = [base] + [f"{base}.{alias.name}" for alias in node.names]
    return {name for name in names if name in modules}


def _imports(modules: dict[str, Path]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Per module: what it imports at module level (``TYPE_CHECKING`` blocks left
    out), and what it imports inside functions."""
    top: dict[str, set[str]] = {}
    inner: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top[module], inner[module] = set(), set()
        for statement in tree.body:
            block: list[ast.stmt] = [statement]
            if isinstance(statement, ast.If):
                if "TYPE_CHECKING" in ast.unparse(statement.test):
                    continue
                block = statement.body + statement.orelse
            elif isinstance(statement, ast.Try):
                block = statement.body + [s for h in statement.handlers for s in h.body]
            for node in block:
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    top[module] |= _targets(module, node, modules)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inside in ast.walk(node):
                    if isinstance(inside, (ast.Import, ast.ImportFrom)):
                        inner[module] |= _targets(module, inside, modules)
    return top, inner


def _reachable(start: str, top: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    stack = [start]
    while stack:
        for target in top.get(stack.pop(), set()):
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def test_no_function_level_import_hides_a_cycle() -> None:
    modules = _modules()
    top, inner = _imports(modules)
    cycles = sorted(
        (module, target)
        for module, targets in inner.items()
        for target in targets
        if target != module and module in _reachable(target, top)
    )
    assert cycles == [], (
        f"function-level imports whose target imports the importer at module level: {cycles}"
    )


def test_the_check_finds_a_hidden_cycle() -> None:
    # The check itself: a.f() imports b, and b imports a at module level.
    modules = {"pkg.a": Path("a.py"), "pkg.b": Path("b.py")}
    a = ast.parse("def f():\n    from pkg import b\n")
    b = ast.parse("from pkg import a\n")
    inner = {"pkg.a": _targets("pkg.a", a.body[0].body[0], modules), "pkg.b": set()}  # type: ignore[attr-defined]
    top = {"pkg.a": set(), "pkg.b": _targets("pkg.b", b.body[0], modules)}  # type: ignore[arg-type]
    assert inner["pkg.a"] == {"pkg.b"}
    assert "pkg.a" in _reachable("pkg.b", top)
