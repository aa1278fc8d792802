"""What ``import aiokafka`` loads: structural checks, not timings.

Each check runs a fresh interpreter (the test process has imported everything already)
and reads ``sys.modules`` after the import. The generated protocol modules are large
(compiling all of them cost ~0.5 s per process without cached bytecode), so they load
on first use; optional integrations (Spark, GSSAPI, OpenTelemetry) load only when
asked for. So do the parts a client may never use: the group membership
implementations (one of them, picked by ``group_protocol`` when the consumer starts),
the assignors but the default round robin, the SASL mechanisms, transactions. And so
does what only a started client uses (issue 14): the cluster client with the connection
layer, the producer's accumulator and sender, the consumer's fetcher, offsets and
commits load with the first ``start()``.
``_CLIENT_MODULES`` pins the whole set the client imports may load: a module that
appears there was added to the import path of every program that imports aiokafka.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from aiokafka.protocol import messages

_GEN = "aiokafka.protocol._gen."

# None, not even the name -> module table: every request class (even Produce and
# Fetch) is resolved when a started client first builds that request.
_USED_BY_CLIENTS: set[str] = set()

_OPTIONAL = (
    "pyspark",
    "gssapi",
    "opentelemetry",
    "crc32c",
    "aiokafka.spark",
    "aiokafka.otel",
    "aiokafka.serialization",
    "fastavro",
    "confluent_kafka",
)

# Everything ``from aiokafka import AIOKafkaProducer, AIOKafkaConsumer`` may load from
# aiokafka (the C extensions only when built). Before adding a module here, ask
# whether a program that never uses it should pay for it at import; if not, import it
# where it is first used (PEP 562 ``__getattr__`` for a package's public names).
_CLIENT_MODULES = {
    "aiokafka",
    "aiokafka._errors_base",
    "aiokafka._extensions",
    "aiokafka._readers",  # slot_reader, for the record classes' read-only fields
    "aiokafka._gen",
    "aiokafka._gen.client_errors",  # the client-side error classes (generated)
    "aiokafka._gen.error_names",  # aiokafka.errors.__all__ without the table
    "aiokafka.abc",
    "aiokafka.consumer",
    "aiokafka.consumer._cready",  # __anext__'s awaitable (C, a few KiB)
    "aiokafka.consumer._gen_options",  # the constructor's signature (generated)
    "aiokafka.consumer.consumer",
    "aiokafka.consumer.group",
    "aiokafka.consumer.group.assignors",
    "aiokafka.consumer.group.assignors.abstract",
    "aiokafka.consumer.group.assignors.roundrobin",  # the default strategy
    "aiokafka.consumer.leftovers",
    "aiokafka.consumer.lookups",  # the facade's look-up methods (a base class)
    "aiokafka.consumer.names014",  # aiokafka 0.14's private names (a base class)
    "aiokafka.consumer.options",
    "aiokafka.consumer.ready",  # __anext__'s awaitable
    "aiokafka.consumer.subscription",
    "aiokafka.errors",
    "aiokafka.hooks",
    "aiokafka.net",
    "aiokafka.net.frames",
    "aiokafka.net.secret",
    "aiokafka.option_checks",  # DEFAULT_CLIENT_ID, the consumer constructor's default
    "aiokafka.options",
    "aiokafka.producer",
    "aiokafka.producer._cfuture",
    "aiokafka.producer._gen_options",  # the constructor's signature (generated)
    "aiokafka.producer.idempotence",
    "aiokafka.producer.options",
    "aiokafka.producer.partitioner",
    "aiokafka.producer.producer",
    "aiokafka.producer.records",  # BatchBuilder; send() sizes records with the builder
    "aiokafka.producer.transactional",  # the facade's methods (a base class)
    "aiokafka.record",  # the package only; its names load on first use
    "aiokafka.record._cbuilder",
    "aiokafka.record.compression",
    "aiokafka.record.default_builder",
    "aiokafka.record.util",
    "aiokafka.record.v2_layout",  # the batch layout constants the builder needs
    "aiokafka.structs",
}

# Loaded when used, and named here because each once loaded at import.
_ON_FIRST_USE = {
    "aiokafka.consumer.group.classic": "group_protocol='classic' at start()",
    "aiokafka.consumer.group.classic_state": "group_protocol='classic' at start()",
    "aiokafka.consumer.group.consumer_protocol": "group_protocol='consumer' at start()",
    "aiokafka.consumer.group.reconcile": "group_protocol='consumer' at start()",
    "aiokafka.consumer.group.assignors.sticky": "the classic protocol's assignors",
    "aiokafka.consumer.group.assignors.compat": "the classic protocol's assignors",
    "aiokafka.consumer.group.assignors.codec": "the classic protocol's assignors",
    "aiokafka.consumer.group.assignors.types": "a group's membership or first rebalance",
    "aiokafka.net.sasl.scram": "the first SASL authentication",
    "aiokafka.net.sasl.plain": "the first SASL authentication",
    "aiokafka.producer.transactions": "a producer with transactional_id",
    "aiokafka.producer.txn_state": "the producer's start() (the sender)",
    "aiokafka._gen.error_codes": "the first broker error class read, or for_code()",
    "aiokafka._error_table": "the first broker error class read, or for_code()",
    "aiokafka.cluster.config": "the first client constructor call",
    "aiokafka.net.config": "the first client constructor call (or an unknown option)",
    "aiokafka.net.sasl": "the first client constructor call (SUPPORTED_MECHANISMS)",
    "aiokafka.producer.config": "the first AIOKafkaProducer(...)",
    "aiokafka.consumer.config": "the first AIOKafkaConsumer(...)",
    "aiokafka.cluster.client": "a client's start()",
    "aiokafka.cluster.connections": "a client's start()",
    "aiokafka.net.connection": "a client's start()",
    "aiokafka.protocol.messages": "a client's first request",
    "aiokafka.producer.accumulator": "the producer's start()",
    "aiokafka.producer.sender": "the producer's start()",
    "aiokafka.producer.futures": "the producer's start()",
    "aiokafka.consumer.fetcher": "the consumer's start()",
    "aiokafka.consumer.offsets": "the consumer's start()",
    "aiokafka.consumer.commits": "the consumer's start()",
    "aiokafka.consumer.no_group": "the consumer's start()",
    "aiokafka.consumer.group.membership": "the consumer's start()",
    "aiokafka.consumer.positions": "the consumer's seek_to_committed()",
    "aiokafka.record.legacy_records": "the consumer's start()",
    "aiokafka.record.memory_records": "the consumer's start()",
    "aiokafka.record.default_records": "the consumer's start() (the v2 reader)",
    "aiokafka.metrics": "a client's start()",
    "difflib": "an unknown option's error message",
    "hmac": "comparing two Secrets; SCRAM",
}


def _run_python(code: str) -> str:
    """What ``code`` prints in a fresh interpreter (nothing imported yet)."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return out.stdout


def _modules_after(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    return set(json.loads(_run_python(code)))


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
    ours = {m for m in loaded if m == "aiokafka" or m.startswith("aiokafka.")}
    assert ours <= _CLIENT_MODULES, sorted(ours - _CLIENT_MODULES)
    early = {m: why for m, why in _ON_FIRST_USE.items() if m in loaded}
    assert not early, early


def test_constructed_clients_load_only_their_configs() -> None:
    # The constructors validate options (the config dataclasses load then) and build
    # plain state; the cluster client, the connection layer, the sender and the
    # fetcher wait for start().
    loaded = _modules_after(
        "from aiokafka import AIOKafkaProducer, AIOKafkaConsumer\n"
        "AIOKafkaProducer(transactional_id='t')\n"
        "AIOKafkaConsumer('topic', group_id='g')\n"
    )
    ours = {m for m in loaded if m == "aiokafka" or m.startswith("aiokafka.")}
    configs = {
        "aiokafka.cluster",
        "aiokafka.net.sasl",  # the package only: SUPPORTED_MECHANISMS
        *(f"aiokafka.{p}.config" for p in ("cluster", "net", "producer", "consumer")),
    }
    assert ours - _CLIENT_MODULES == configs


def test_start_loads_the_client_machinery() -> None:
    # start() imports what it builds (a NameError there would only show with a broker
    # otherwise): with nothing listening, both clients fail to bootstrap after it.
    code = (
        "import asyncio, sys, json\n"
        "from aiokafka import AIOKafkaProducer, AIOKafkaConsumer\n"
        "from aiokafka.errors import KafkaConnectionError\n"
        "async def main():\n"
        "    for client in (\n"
        "        AIOKafkaProducer(bootstrap_servers='127.0.0.1:9', request_timeout_ms=500),\n"
        "        AIOKafkaConsumer('t', bootstrap_servers='127.0.0.1:9', request_timeout_ms=1000),\n"
        "    ):\n"
        "        try:\n"
        "            await client.start()\n"
        "        except KafkaConnectionError:\n"
        "            pass\n"
        "        else:\n"
        "            raise AssertionError('started without a broker')\n"
        "asyncio.run(main())\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    loaded = set(json.loads(_run_python(code)))
    for name in (
        "aiokafka.cluster.client",
        "aiokafka.producer.accumulator",
        "aiokafka.producer.sender",
        "aiokafka.consumer.fetcher",
        "aiokafka.consumer.commits",
        "aiokafka.consumer.offsets",
    ):
        assert name in loaded, name


def test_broker_error_classes_load_on_first_use() -> None:
    # aiokafka.errors lists every name, but the 128 generated classes (and the three
    # derived from them) load with the first read of one or the first for_code().
    code = (
        "import sys, pickle\n"
        "import aiokafka.errors as errors\n"
        "table = 'aiokafka._error_table'\n"
        "assert table not in sys.modules and 'aiokafka._gen.error_codes' not in sys.modules\n"
        "assert 'NotLeaderForPartitionError' in errors.__all__\n"
        "assert 'LogTruncationError' in dir(errors)\n"
        "assert not hasattr(errors, '__path__') and table not in sys.modules\n"
        "cls = errors.NotLeaderForPartitionError\n"
        "assert table in sys.modules and errors.__dict__['NotLeaderForPartitionError'] is cls\n"
        "assert cls.__module__ == 'aiokafka.errors' and errors.for_code(6) is cls\n"
        "exc = errors.LogTruncationError('t', divergent_offsets={'tp': 1})\n"
        "assert pickle.loads(pickle.dumps(exc)).divergent_offsets == {'tp': 1}\n"
        "from aiokafka.errors import *\n"
        "assert UnknownTopicOrPartitionError.errno == 3\n"
        "print('ok')\n"
    )
    assert _run_python(code).strip() == "ok"


def test_first_use_modules_exist() -> None:
    # Keeps _ON_FIRST_USE honest: a renamed module would pass the check above unseen.
    import importlib.util

    for name in _ON_FIRST_USE:
        assert importlib.util.find_spec(name) is not None, name


def test_consumer_alone_loads_no_producer_api() -> None:
    gen = _generated(_modules_after("from aiokafka import AIOKafkaConsumer"))
    assert not gen & {"produce", "add_partitions_to_txn", "end_txn"}


@pytest.mark.parametrize(
    ("package", "name", "module"),
    [
        ("aiokafka.consumer.group.assignors", "StickyPartitionAssignor", "sticky"),
        ("aiokafka.consumer.group.assignors", "as_assignor", "compat"),
        ("aiokafka.consumer.group.assignors", "encode_subscription", "codec"),
        ("aiokafka.net.sasl", "ScramSha512Mechanism", "scram"),
        ("aiokafka.net.sasl", "GssapiMechanism", "gssapi"),
        ("aiokafka.cluster", "AIOKafkaClient", "client"),
        ("aiokafka.cluster", "ClusterMetadata", "metadata"),
        ("aiokafka.record", "LegacyRecordBatch", "legacy_records"),
        ("aiokafka.record", "MemoryRecords", "memory_records"),
        ("aiokafka.producer", "ProducerConfig", "config"),
        ("aiokafka.producer", "InvalidOptionError", "config"),
        ("aiokafka.consumer", "ConsumerConfig", "config"),
    ],
)
def test_lazy_package_names_load_their_module_on_first_use(
    package: str, name: str, module: str
) -> None:
    # A fresh process: `from package import name` (the aiokafka 0.14 spelling) works
    # and is what imports the submodule; the name then lives in the package's dict.
    code = (
        "import sys, importlib\n"
        f"pkg = importlib.import_module('{package}')\n"
        f"assert '{package}.{module}' not in sys.modules\n"
        f"assert '{name}' in dir(pkg) and '{name}' in pkg.__all__\n"
        f"from {package} import {name}\n"
        f"assert '{package}.{module}' in sys.modules\n"
        f"assert pkg.__dict__['{name}'] is {name}\n"
        f"assert {name} is getattr(importlib.import_module('{package}.{module}'), '{name}')\n"
        "print('ok')\n"
    )
    assert _run_python(code).strip() == "ok"


@pytest.mark.parametrize(
    "package",
    [
        "aiokafka.consumer.group.assignors",
        "aiokafka.net.sasl",
        "aiokafka.cluster",
        "aiokafka.record",
        "aiokafka.producer",
        "aiokafka.consumer",
    ],
)
def test_lazy_packages_export_every_name(package: str) -> None:
    import importlib

    pkg = importlib.import_module(package)
    for name in pkg.__all__:
        assert getattr(pkg, name) is not None, name
    assert set(pkg.__all__) <= set(dir(pkg))
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = pkg.no_such_name


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
    assert _run_python(code).strip() == "ok"


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
