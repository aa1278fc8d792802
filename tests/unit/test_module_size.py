"""Every hand-written Python module of the package stays under 800 lines (issue 16).

A module past that size has, in this code base, always turned out to hold two
responsibilities; the limit makes the split happen when the second one arrives, not
after it has grown into the first. Generated modules (``_gen/``, ``_gen_options.py``)
are exempt: their size follows Kafka's message definitions. The C extensions are not
counted here.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "aiokafka"
LIMIT = 800


def _generated(path: Path) -> bool:
    return "_gen" in path.relative_to(PACKAGE).parts or path.name == "_gen_options.py"


def test_hand_written_modules_stay_under_the_limit() -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
        if not _generated(path)
    }
    assert len(sizes) > 150  # the walk found the package
    too_long = {name: n for name, n in sizes.items() if n >= LIMIT}
    assert too_long == {}


def test_the_generated_modules_are_the_ones_exempted() -> None:
    exempt = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if _generated(p))
    assert "protocol/_gen/produce.py" in exempt and "producer/_gen_options.py" in exempt
    assert not any(name.startswith(("producer/sender", "consumer/fetcher")) for name in exempt)
