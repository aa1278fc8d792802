"""Command line: ``python -m tools.kafka {fetch,start,stop,status}``.

``start`` launches brokers in the background (they outlive this command), prints the
bootstrap servers and writes ``.kafka/state.json``; ``stop`` stops them by the PIDs recorded
there; ``status`` says whether they are up and answering.
"""

from __future__ import annotations

import argparse
import json
import sys

from . import wire
from .fetch import ensure_jars, pinned_version
from .rig import STATE_FILE, KafkaCluster, KafkaStartError, pid_alive, stop_pids


def _load_state() -> dict[str, object] | None:
    if not STATE_FILE.exists():
        return None
    state: dict[str, object] = json.loads(STATE_FILE.read_text())
    return state


def _cmd_fetch(_: argparse.Namespace) -> int:
    libs = ensure_jars()
    print(f"Apache Kafka {pinned_version()} jars ready in {libs}")
    return 0


def _cmd_telemetry_plugin(_: argparse.Namespace) -> int:
    from .telemetry_plugin import build

    print(f"client-telemetry test plugin ready in {build()}")
    return 0


def _cmd_start(args: argparse.Namespace) -> int:
    state = _load_state()
    if state is not None and any(pid_alive(int(n["pid"])) for n in state["nodes"]):  # type: ignore[attr-defined]
        print(f"brokers already running (see {STATE_FILE}); run `stop` first", file=sys.stderr)
        return 1
    cluster = KafkaCluster(
        3 if args.cluster else 1,
        auto_create_topics=args.auto_create_topics,
        detach=True,
    )
    try:
        cluster.start(timeout=args.timeout)
    except KafkaStartError as exc:
        print(exc, file=sys.stderr)
        return 1
    STATE_FILE.write_text(json.dumps(cluster.describe(), indent=2))
    print(f"started in {cluster.start_seconds:.1f}s, state in {STATE_FILE}", file=sys.stderr)
    for listener in cluster.listeners:
        print(f"{listener}={cluster.bootstrap(listener)}")
    if cluster.tls is not None:
        print(f"CA_FILE={cluster.ca_file}")
    return 0


def _cmd_stop(_: argparse.Namespace) -> int:
    state = _load_state()
    if state is None:
        print("nothing to stop (no state file)", file=sys.stderr)
        return 0
    pids = stop_pids(state["nodes"])  # type: ignore[arg-type]
    STATE_FILE.unlink()
    print(f"stopped {len(pids)} broker(s): {pids}")
    return 0


def _cmd_status(_: argparse.Namespace) -> int:
    state = _load_state()
    if state is None:
        print("no brokers started by the CLI")
        return 1
    up = 0
    for node in state["nodes"]:  # type: ignore[attr-defined]
        port = node["ports"]["PLAINTEXT"]
        try:
            brokers = sorted(wire.metadata("127.0.0.1", port, topics=[]).broker_ids)
            status = f"up, sees brokers {brokers}"
            up += 1
        except wire.WireError as exc:
            status = f"{'running' if pid_alive(node['pid']) else 'dead'}, not answering ({exc})"
        print(f"node {node['node_id']} pid {node['pid']} 127.0.0.1:{port}: {status}")
    print(f"bootstrap: {state['bootstrap']}")
    return 0 if up == len(state["nodes"]) else 1  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m tools.kafka``."""
    parser = argparse.ArgumentParser(prog="python -m tools.kafka", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("fetch", help="download the pinned Kafka jars (once)").set_defaults(
        func=_cmd_fetch
    )
    sub.add_parser(
        "telemetry-plugin", help="compile the KIP-714 test plugin (tools/kafka/telemetry-plugin)"
    ).set_defaults(func=_cmd_telemetry_plugin)
    start = sub.add_parser("start", help="start brokers in the background")
    start.add_argument("--cluster", action="store_true", help="three nodes instead of one")
    start.add_argument("--auto-create-topics", action="store_true")
    start.add_argument("--timeout", type=float, default=90.0, help="seconds (default 90)")
    start.set_defaults(func=_cmd_start)
    sub.add_parser("stop", help="stop brokers started by `start`").set_defaults(func=_cmd_stop)
    sub.add_parser("status", help="are the brokers up?").set_defaults(func=_cmd_status)
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
