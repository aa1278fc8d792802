"""Finding the input that killed a worker (a segfault or abort in a C decoder).

Each worker process writes the input it is about to decode to its own trace file and
marks it finished afterwards (two ``pwrite`` calls, a few microseconds). When a worker
dies, the pool breaks and the executor stops the others, so every trace still marked
"running" is a suspect: :func:`confirm_crash` runs each suspect alone in a fresh child
process, and only one that kills that child too (or never returns: a loop in C code,
which the worker's watchdog ended) is a crash.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .targets import Target

__all__ = ["Suspect", "Trace", "confirm_crash", "read_suspects"]

# chunk, running flag, checksum flag, target name length, data length
_HEADER = struct.Struct(">iBBHi")
_RUNNING_OFFSET = 4


@dataclass(frozen=True)
class Suspect:
    """An input a worker had started and not finished when the pool broke."""

    chunk: int
    target: str
    checked: bool
    data: bytes


class Trace:
    """One worker's trace file in ``trace_dir`` (named after its pid)."""

    def __init__(self, trace_dir: Path) -> None:
        path = trace_dir / f"{os.getpid()}.trace"
        self._fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)

    def begin(self, chunk: int, target: str, checked: bool, data: bytes) -> None:
        name = target.encode()
        header = _HEADER.pack(chunk, 1, checked, len(name), len(data))
        os.pwrite(self._fd, header + name + data, 0)

    def end(self) -> None:
        os.pwrite(self._fd, b"\x00", _RUNNING_OFFSET)


def read_suspects(trace_dir: Path) -> list[Suspect]:
    """Inputs still marked running in ``trace_dir``; the trace files are removed."""
    out = []
    for path in sorted(trace_dir.glob("*.trace")):
        raw = path.read_bytes()
        path.unlink()
        if len(raw) < _HEADER.size:
            continue
        chunk, running, checked, name_len, data_len = _HEADER.unpack_from(raw, 0)
        if not running:
            continue
        start = _HEADER.size
        name = raw[start : start + name_len].decode()
        data = raw[start + name_len : start + name_len + data_len]
        out.append(Suspect(chunk, name, bool(checked), data))
    return out


def _run_alone(make_targets: Callable[[], list[Target]], suspect: Suspect) -> None:
    target = next(t for t in make_targets() if t.name == suspect.target)
    with contextlib.suppress(Exception):
        target.run(suspect.data, suspect.checked)


def confirm_crash(
    make_targets: Callable[[], list[Target]], suspect: Suspect, timeout: float = 60.0
) -> str | None:
    """Decode ``suspect`` alone in a fresh child: how it failed, or ``None`` if it did not.

    A child killed by a signal, or still running after ``timeout`` seconds (a loop in C
    code), is a failure; a child that finishes, whatever the decoder raised, is not.
    """
    child = multiprocessing.get_context("fork").Process(
        target=_run_alone, args=(make_targets, suspect)
    )
    child.start()
    child.join(timeout)
    if child.exitcode is None:
        child.kill()
        child.join()
        return f"the decoder did not return within {timeout:.0f} s (stuck in C code?)"
    if child.exitcode < 0:
        return f"the decoder killed its process (signal {-child.exitcode})"
    return None
