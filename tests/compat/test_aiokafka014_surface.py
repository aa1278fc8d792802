"""Every public module, class, function and method of aiokafka 0.14 that user code
touches exists here with the same parameters, defaults and sync/async kind.

aiokafka 0.14 is installed from PyPI, once, into its own virtualenv
(``benchmark/.venvs/aiokafka014``, shared with the benchmark harness and ignored by
git): it has our import name, so it cannot live in ``.venv``. ``_surface_dump.py``
runs under that interpreter and under ours and prints each surface as JSON;
``_surface_compare.py`` lists the differences. The deliberate ones are in
``ALLOWED`` below, each with its reason (``docs/migration-from-aiokafka.md`` says
what to write instead).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmark.clients import (
    AIOKAFKA014_REQUIREMENT,
    AIOKAFKA014_VENV,
    ClientUnavailable,
    ensure_venv,
)

from ._surface_compare import NO_DEFAULT, compare

ROOT = Path(__file__).resolve().parents[2]
DUMP = Path(__file__).with_name("_surface_dump.py")
REQUIREMENT = AIOKAFKA014_REQUIREMENT  # the benchmark's virtualenv, shared
CLIENTS = {
    "aiokafka.producer": "AIOKafkaProducer",
    "aiokafka.consumer": "AIOKafkaConsumer",
    "aiokafka.admin": "AIOKafkaAdminClient",
    "aiokafka.client": "AIOKafkaClient",
}

_ASSIGNOR_REASON = (
    "ours take the typed ClusterView / GroupMember and are instance methods (the "
    "consumer instantiates assignor classes); aiokafka's classmethods took its own "
    "struct types, which no caller could pass to ours anyway. metadata() is a "
    "classmethod as in aiokafka"
)

_STICKY = "aiokafka.coordinator.assignors.sticky.sticky_assignor"
_STICKY_INTERNALS = (
    "internal helper of aiokafka's sticky implementation (not user API); ours is "
    "aiokafka.consumer.group.assignors.sticky"
)
_STICKY_STATE = (
    "aiokafka kept the sticky state in class attributes shared by every consumer of "
    "the process (classmethods); ours keeps it per instance, so two consumers in one "
    "process do not overwrite each other's previous assignment"
)

_CLUSTER = "aiokafka.cluster:ClusterMetadata"
_SNAPSHOT = (
    "ours is an immutable snapshot that the client replaces on every refresh (no I/O, "
    "no locks, no mutation); aiokafka's object was updated in place by its client. To "
    "refresh, call await client.force_metadata_update(); to see changes, read "
    "client.cluster again"
)
_CALLABLE_MAP = (
    "our existing mapping attribute (by id / by name), which is also callable: "
    "cluster.{0}() returns aiokafka's set"
)

#: Deliberate differences: key (as ``_surface_compare.compare`` spells it) -> reason.
ALLOWED: dict[str, str] = {
    **{
        f"{_CLUSTER}.{name}": _SNAPSHOT
        for name in (
            "DEFAULT_CONFIG",
            "add_listener",
            "remove_listener",
            "request_update",
            "failed_update",
            "update_metadata",
            "with_partitions",
        )
    },
    f"{_CLUSTER}.brokers": _CALLABLE_MAP.format("brokers"),
    f"{_CLUSTER}.topics": _CALLABLE_MAP.format("topics"),
    **{
        f"{_STICKY}:{name}": _STICKY_INTERNALS
        for name in (
            "ConsumerGenerationPair",
            "ConsumerSubscription",
            "StickyAssignmentExecutor",
            "StickyAssignorMemberMetadataV1",
            "StickyAssignorUserDataV1",
            "StickyPartitionAssignor.parse_member_metadata",
            "has_identical_list_elements",
            "partitions_comparator_key",
            "remove_if_present",
            "subscriptions_comparator_key",
        )
    },
    **{
        f"{_STICKY}:StickyPartitionAssignor.{name}": _STICKY_STATE
        for name in ("assign", "metadata", "on_assignment", "on_generation_assignment")
    },
    "aiokafka.coordinator.assignors.range:RangePartitionAssignor.assign": _ASSIGNOR_REASON,
    "aiokafka.coordinator.assignors.range:RangePartitionAssignor.on_assignment": (_ASSIGNOR_REASON),
    "aiokafka.coordinator.assignors.roundrobin:RoundRobinPartitionAssignor.assign": (
        _ASSIGNOR_REASON
    ),
    "aiokafka.coordinator.assignors.roundrobin:RoundRobinPartitionAssignor.on_assignment": (
        _ASSIGNOR_REASON
    ),
}

#: Constructor defaults that differ from aiokafka 0.14's on purpose: (class, keyword)
#: -> reason. ``docs/migration-from-aiokafka.md`` lists them with what to write to
#: get aiokafka's behaviour. They are the only constructor differences allowed, both
#: in the signatures (every option is an explicit keyword-only parameter, compared by
#: name, kind and default) and in the values a client built with no argument gets.
DEFAULT_DIFFERENCES: dict[tuple[str, str], str] = {
    ("AIOKafkaProducer", "enable_idempotence"): (
        "on by default as in the Java client since Kafka 3.0: no duplicates or "
        "reordering on retries; aiokafka's is False"
    ),
    ("AIOKafkaProducer", "acks"): (
        "'all' (-1) by default, which idempotence requires; aiokafka's unset acks meant "
        "1 without idempotence"
    ),
    ("AIOKafkaProducer", "max_batch_size"): (
        "256 KiB: fewer, larger Produce requests (throughput measured in benchmark/); "
        "aiokafka's 16 KiB capped batches far below what one request carries"
    ),
    ("AIOKafkaProducer", "partitioner"): (
        "None means the built-in Java-compatible partitioner (murmur2 for keys, KIP-480 "
        "sticky for keyless records); aiokafka's DefaultPartitioner object is still "
        "accepted"
    ),
    ("AIOKafkaProducer", "client_id"): (
        "'aiokafka-producer' where aiokafka's None meant 'aiokafka-producer-<n>'"
    ),
    **{
        (cls, "client_id"): "'aiokafka-<our version>' (aiokafka: 'aiokafka-0.14.0')"
        for cls in ("AIOKafkaConsumer", "AIOKafkaAdminClient", "AIOKafkaClient")
    },
    **{
        (cls, "api_version"): "stored as 'auto'; every value is accepted and ignored"
        for cls in CLIENTS.values()
    },
}


def _listed_default_difference(key: str, what: str) -> bool:
    """Whether ``key`` is a constructor parameter whose default differs on purpose:
    the constructors declare every option, so their signatures show the defaults that
    ``DEFAULT_DIFFERENCES`` lists (``"aiokafka.producer:AIOKafkaProducer.__init__(acks)"``
    with ``what`` ``"default ... in aiokafka, ... here"``)."""
    where, _, param = key.partition(".__init__(")
    if not param or not what.startswith("default "):
        return False
    return (where.rsplit(":", 1)[-1], param.rstrip(")")) in DEFAULT_DIFFERENCES


def _our_default(instance: Any, name: str) -> Any:
    config = instance.config
    for holder in (config, getattr(config, "client", None)):
        if holder is not None and hasattr(holder, name):
            return getattr(holder, name)
    raise AssertionError(f"{type(instance).__name__}.config has no {name!r}")


def _default_partitioner() -> Any:
    from aiokafka.partitioner import DefaultPartitioner

    return DefaultPartitioner()


def _roundrobin_strategy() -> Any:
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    return (RoundRobinPartitionAssignor,)


#: aiokafka 0.14's constructor defaults that are objects, as it builds them (``acks``
#: is a "not given" sentinel that resolves to 1 without idempotence, its default).
_OBJECT_DEFAULTS: dict[str, Any] = {
    "acks": lambda: 1,
    "partitioner": _default_partitioner,
    "partition_assignment_strategy": _roundrobin_strategy,
}


def _pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError:
        return False
    return True


def _dump(python: Path | str, *args: str, ours: bool) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    if ours:
        env["PYTHONPATH"] = str(ROOT)
    # Run outside the repository so that aiokafka 0.14's interpreter cannot find ours.
    done = subprocess.run(
        [str(python), str(DUMP), *args],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd="/",
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def surfaces(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any]]:
    try:
        python = ensure_venv(AIOKAFKA014_VENV, REQUIREMENT)
    except ClientUnavailable as exc:
        if not _pypi_reachable():
            pytest.skip(f"PyPI is unreachable, cannot install {REQUIREMENT}: {exc}")
        raise
    theirs = _dump(python, ours=False)
    names = tmp_path_factory.mktemp("surface") / "aiokafka014.json"
    names.write_text(json.dumps(theirs))
    ours = _dump(sys.executable, str(names), ours=True)
    return theirs, ours


def test_the_reference_is_aiokafka_0_14(surfaces: tuple[dict[str, Any], dict[str, Any]]) -> None:
    theirs, _ = surfaces
    assert not any(m["missing"] for m in theirs.values()), "aiokafka 0.14 lacks a module"
    # A sanity check that the dump saw the real thing, not ours.
    producer = theirs["aiokafka.producer"]["names"]["AIOKafkaProducer"]
    init = {p["name"]: p["default"] for p in producer["init"]}
    assert init["max_batch_size"] == 16384


def test_surface_matches_aiokafka_0_14(surfaces: tuple[dict[str, Any], dict[str, Any]]) -> None:
    theirs, ours = surfaces
    differences = compare(theirs, ours)
    unexpected = [
        f"{key}: {what}"
        for key, what in differences
        if key.split("(")[0] not in ALLOWED
        and key not in ALLOWED
        and not _listed_default_difference(key, what)
    ]
    assert not unexpected, "differences from aiokafka 0.14:\n" + "\n".join(unexpected)
    seen = {key for key, _ in differences} | {key.split("(")[0] for key, _ in differences}
    stale = sorted(set(ALLOWED) - seen)
    assert not stale, f"allow-list entries that no longer differ: {stale}"


def test_every_aiokafka_constructor_keyword_is_accepted(
    surfaces: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """Each keyword of aiokafka's four constructors, passed with aiokafka's default,
    is accepted (the constructors only validate; nothing connects)."""
    import importlib

    theirs, _ = surfaces
    checked = 0
    for module, name in CLIENTS.items():
        cls = getattr(importlib.import_module(module), name)
        params = theirs[module]["names"][name]["init"]
        for p in params:
            if p["kind"] in ("VAR_POSITIONAL", "VAR_KEYWORD"):
                continue
            default = p["default"]
            if isinstance(default, str) and default.startswith("<"):
                # An object the dump cannot carry: aiokafka's value, rebuilt here.
                default = _OBJECT_DEFAULTS[p["name"]]()
            assert default != NO_DEFAULT, f"{name}({p['name']}) is required in aiokafka"
            try:
                cls(**{p["name"]: default})
            except Exception as exc:
                pytest.fail(f"{name}({p['name']}={default!r}) raised {exc!r}")
            checked += 1
    assert checked > 90  # the four constructors have ~100 keywords between them


def test_constructor_defaults_match_aiokafka_or_are_listed(
    surfaces: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    import importlib

    theirs, _ = surfaces
    unexpected = []
    listed_and_differing = set()
    for module, name in CLIENTS.items():
        ours = getattr(importlib.import_module(module), name)()
        for p in theirs[module]["names"][name]["init"]:
            if p["kind"] in ("VAR_POSITIONAL", "VAR_KEYWORD") or p["name"] == "loop":
                continue
            default = p["default"]
            if isinstance(default, str) and default.startswith("<"):
                default = _OBJECT_DEFAULTS[p["name"]]()
            mine = _our_default(ours, p["name"])
            same = mine == default
            if same:
                continue
            if (name, p["name"]) in DEFAULT_DIFFERENCES:
                listed_and_differing.add((name, p["name"]))
            else:
                unexpected.append(f"{name}({p['name']}): aiokafka {default!r}, ours {mine!r}")
    assert not unexpected, "undocumented default differences:\n" + "\n".join(unexpected)
    stale = sorted(set(DEFAULT_DIFFERENCES) - listed_and_differing)
    assert not stale, f"listed default differences that no longer differ: {stale}"
