"""Processes and ports of the rig's brokers: free loopback ports below the ephemeral
range, and stopping broker JVMs recorded by PID (the CLI's state file).

Kept apart from ``rig.py`` (the cluster's life cycle) so each stays small.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import time
from pathlib import Path
from typing import Any

__all__ = ["free_ports", "pid_alive", "stop_pids"]


def _port_range() -> tuple[int, int]:
    # Ports are picked BELOW the kernel's ephemeral range: a client's outgoing connection can
    # never be given one of them, so a killed broker can always rebind its port on restart.
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    return (max(1024, low - 12000), low - 1)


def free_ports(host: str, count: int) -> list[int]:
    """``count`` ports of ``host`` free to bind now, below the ephemeral range.

    Raises:
        OSError: not enough free ports.
    """
    first, last = _port_range()
    candidates = random.sample(range(first, last + 1), k=min(last - first + 1, count * 50))
    chosen: list[int] = []
    for port in candidates:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
        chosen.append(port)
        if len(chosen) == count:
            return chosen
    raise OSError(f"no {count} free ports on {host} in {first}..{last}")


def _is_our_broker(pid: int, config: str) -> bool:
    # PIDs in a state file may have been reused since; only signal the JVM we launched.
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"kafka.Kafka" in cmdline and config.encode() in cmdline


def stop_pids(nodes: list[dict[str, Any]], timeout: float = 20.0) -> list[int]:
    """Stop brokers recorded in a state file (SIGTERM, then SIGKILL after ``timeout``).

    Returns:
        The PIDs that were signalled.
    """
    pids = [n["pid"] for n in nodes if n.get("pid") and _is_our_broker(n["pid"], n["config"])]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    remaining = list(pids)
    while remaining and time.monotonic() < deadline:
        remaining = [p for p in remaining if Path(f"/proc/{p}").exists() and pid_alive(p)]
        time.sleep(0.2)
    for pid in remaining:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return pids


def pid_alive(pid: int) -> bool:
    """True if process ``pid`` exists and has not exited (Linux ``/proc``)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has exited; only its parent can reap it
