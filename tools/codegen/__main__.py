"""Entry point: regenerate the committed generated modules, or check them.

Every generator module listed in ``GENERATORS`` exposes:

* ``OUTPUT_DIRS``: repo-relative directories whose ``*.py`` files it owns entirely
  (a stale file there is deleted on regeneration and reported by ``--check``);
* ``generate(spec_dir: Path) -> dict[str, str]``: repo-relative POSIX path to the full
  text of each file it produces.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Protocol, cast

REPO = Path(__file__).resolve().parents[2]
DEFAULT_SPEC = REPO.parent / "shared" / "kafka-protocol"
GENERATORS = (
    "tools.codegen.messages",
    "tools.codegen.errors",
    "tools.codegen.client_errors",
    "tools.codegen.options",
)


class _Generator(Protocol):
    OUTPUT_DIRS: tuple[str, ...]

    def generate(self, spec_dir: Path) -> dict[str, str]: ...


def _collect(spec_dir: Path) -> tuple[dict[str, str], list[str]]:
    outputs: dict[str, str] = {}
    owned: list[str] = []
    for name in GENERATORS:
        gen = cast(_Generator, importlib.import_module(name))
        for path, text in gen.generate(spec_dir).items():
            if path in outputs:
                raise SystemExit(f"two generators write {path}")
            outputs[path] = text
        owned.extend(gen.OUTPUT_DIRS)
    return outputs, owned


def _stale(outputs: dict[str, str], owned: list[str]) -> list[Path]:
    stale = []
    for d in owned:
        for f in sorted((REPO / d).glob("*.py")):
            if f.relative_to(REPO).as_posix() not in outputs:
                stale.append(f)
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.codegen")
    parser.add_argument("--check", action="store_true", help="fail on any difference")
    parser.add_argument("--spec", type=Path, default=DEFAULT_SPEC, help="kafka-protocol dir")
    args = parser.parse_args(argv)
    outputs, owned = _collect(args.spec)
    stale = _stale(outputs, owned)
    if args.check:
        problems = [f"stale generated file: {p.relative_to(REPO)}" for p in stale]
        for path, text in sorted(outputs.items()):
            target = REPO / path
            if not target.exists():
                problems.append(f"missing generated file: {path}")
            elif target.read_text(encoding="utf-8") != text:
                problems.append(f"generated file differs: {path}")
        for p in problems:
            print(p, file=sys.stderr)
        if problems:
            print("run `python -m tools.codegen` and commit the result", file=sys.stderr)
            return 1
        print(f"generated code is up to date ({len(outputs)} files)")
        return 0
    for stale_file in stale:
        stale_file.unlink()
    for path, text in sorted(outputs.items()):
        target = REPO / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    print(f"wrote {len(outputs)} generated files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
