"""What ``import aiokafka`` loads: structural checks, not timings.

Each check runs a fresh interpreter (the test process has imported everything already)
and reads ``sys.modules`` after the import. The generated protocol modules are large
(compiling all of them cost ~0.5 s per process without cached bytecode), so they load
on first use; optional integrations (Spark, GSSAPI, OpenTelemetry) load only when
asked for.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from aiokafka.protocol import messages

_GEN = "aiokafka.protocol._gen."

# APIs the producer and consumer facades talk to from their own modules' top level
# (sender/transactions/idempotence name their request classes at import). Anything
# else (admin, share groups, KRaft, ACLs, delegation tokens, ...) must wait for use.
_USED_BY_CLIENTS = {
    "_index",
    "produce",
    "init_producer_id",
    "add_offsets_to_txn",
    "add_partitions_to_txn",
    "end_txn",
    "txn_offset_commit",
}

_OPTIONAL = ("pyspark", "gssapi", "opentelemetry", "crc32c", "aiokafka.spark", "aiokafka.otel")


def _modules_after(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(out.stdout))


def _generated(modules: set[str]) -> set[str]:
    return {m[len(_GEN) :] for m in modules if m.startswith(_GEN)}


def test_import_aiokafka_loads_no_generated_module() -> None:
    loaded = _modules_after("import aiokafka")
    assert _generated(loaded) <= {"_index"}


@pytest.mark.parametrize(
    "statement",
    [
        "from aiokafka import AIOKafkaProducer, AIOKafkaConsumer",
        "from aiokafka import AIOKafkaConsumer",
        "from aiokafka import AIOKafkaProducer",
    ],
)
def test_clients_load_only_the_apis_their_modules_name(statement: str) -> None:
    loaded = _modules_after(statement)
    gen = _generated(loaded)
    assert gen <= _USED_BY_CLIENTS, sorted(gen - _USED_BY_CLIENTS)
    # Not even the APIs every connection uses: they load at the first request.
    assert not gen & {"fetch", "metadata", "api_versions", "header", "find_coordinator"}
    for name in _OPTIONAL:
        assert not any(m == name or m.startswith(name + ".") for m in loaded), name


def test_consumer_alone_loads_no_producer_api() -> None:
    gen = _generated(_modules_after("from aiokafka import AIOKafkaConsumer"))
    assert not gen & {"produce", "add_partitions_to_txn", "end_txn"}


def test_names_resolve_on_first_use_and_stay() -> None:
    # In a fresh process: the module is imported by the first read of one of its names.
    code = (
        "import sys\n"
        "from aiokafka.protocol import messages as m\n"
        f"assert '{_GEN}describe_quorum' not in sys.modules\n"
        "cls = m.DescribeQuorumRequest\n"
        f"assert '{_GEN}describe_quorum' in sys.modules\n"
        "assert m.__dict__['DescribeQuorumRequest'] is cls\n"
        f"assert m.REQUEST_TYPES[55] is cls\n"
        f"assert '{_GEN}describe_acls' not in sys.modules\n"
        "from aiokafka.protocol.messages import DescribeAclsRequest\n"
        f"assert '{_GEN}describe_acls' in sys.modules\n"
        "print('ok')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "ok"


def test_lazy_exports_match_the_eager_index() -> None:
    from aiokafka.protocol._gen import _all

    assert set(messages.__all__) == {*_all.__all__, "REQUEST_TYPES", "RESPONSE_TYPES"}
    for name in _all.__all__:
        assert getattr(messages, name) is getattr(_all, name)
    assert dict(messages.REQUEST_TYPES) == _all.REQUEST_TYPES
    assert dict(messages.RESPONSE_TYPES) == _all.RESPONSE_TYPES
    assert 999 not in messages.REQUEST_TYPES
    assert messages.REQUEST_TYPES.get(999) is None
    with pytest.raises(AttributeError):
        _ = messages.NoSuchMessage
