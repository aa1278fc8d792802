"""Generate the client constructors' signatures from one table of options.

Every client takes aiokafka 0.14's options as explicit keyword parameters, so that
``inspect.signature()``, IDEs and mypy see their names, types and defaults. The
shared ones (servers, timeouts, security, SASL, ...) are the same in the four
constructors (``AIOKafkaClient``, ``AIOKafkaAdminClient``, ``AIOKafkaConsumer``,
``AIOKafkaProducer``); this table declares each option once (type, default, one-line
``Args:`` entry) and each client's list says which it takes, in aiokafka's order, and
where its default or entry differs. The generated ``*Signature`` classes hold only
the signature and its docstring: their ``__init__`` hands the options to
``_take_options``, written by hand in each client's ``options`` module (validation,
config). ``tests/unit/test_constructor_signatures.py`` checks the result against the
config dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

OUTPUT_DIRS: tuple[str, ...] = ()


@dataclass(frozen=True)
class Option:
    """One keyword option: its annotation, default and ``Args:`` entry (source text)."""

    name: str
    annotation: str
    default: str
    doc: str


_OPTIONS = (
    Option("loop", "asyncio.AbstractEventLoop | None", "None",
           "Deprecated and ignored (a ``DeprecationWarning``)."),
    Option("bootstrap_servers", "str | Sequence[str]", '"localhost"',
           '``"host:port[,host:port]"`` or a list of them.'),
    Option("client_id", "str | None", "DEFAULT_CLIENT_ID",
           "Sent in request headers (broker logs, quotas)."),
    Option("metadata_max_age_ms", "int", "300000", "Refresh metadata at least this often."),
    Option("request_timeout_ms", "int", "40000", "Deadline of one request, and of connecting."),
    Option("retry_backoff_ms", "int", "100", "Pause between retries of a failed request."),
    Option("reconnect_backoff_ms", "int", "50", "First pause before reconnecting to a broker."),
    Option("reconnect_backoff_max_ms", "int", "1000", "Bound of the growing reconnect pause."),
    Option("connections_max_idle_ms", "int", "540000", "Close connections idle for longer."),
    Option("max_in_flight_requests_per_connection", "int", "5",
           "Pipelining depth per connection."),
    Option("api_version", "str | None", '"auto"',
           "Accepted for aiokafka and ignored (versions are negotiated)."),
    Option("security_protocol", "str", '"PLAINTEXT"',
           "``PLAINTEXT``, ``SSL``, ``SASL_PLAINTEXT`` or ``SASL_SSL``."),
    Option("ssl_context", "ssl.SSLContext | None", "None", "Required for the SSL protocols."),
    Option("sasl_mechanism", "str", '"PLAIN"',
           "``PLAIN``, ``SCRAM-SHA-256/512``, ``OAUTHBEARER``, ``GSSAPI``."),
    Option("sasl_plain_username", "str | None", "None", "User for PLAIN/SCRAM."),
    Option("sasl_plain_password", "str | Secret | None", "None",
           "Password for PLAIN/SCRAM (kept as a ``Secret``)."),
    Option("sasl_kerberos_service_name", "str", '"kafka"', "Kerberos service name (GSSAPI)."),
    Option("sasl_kerberos_domain_name", "str | None", "None",
           "Kerberos host name override (GSSAPI)."),
    Option("sasl_oauth_token_provider", "AbstractTokenProvider | None", "None",
           "Token provider (OAUTHBEARER)."),
    Option("sasl_scram_token_auth", "bool", "False",
           "SCRAM with a delegation token (KIP-48)."),
    Option("client_rack", "str | None", "None", "The client's rack."),
    Option("allow_auto_topic_creation", "bool", "True",
           "Let Metadata requests create missing topics."),
    Option("max_response_size", "int", "DEFAULT_MAX_RESPONSE_SIZE",
           "Largest response frame accepted from a broker."),
    Option("enable_metrics_push", "bool", "True",
           "Push metrics when the cluster subscribes (KIP-714)."),
    # The consumer's own.
    Option("group_id", "str | None", "None",
           "The consumer group; ``None`` for no group (no commits)."),
    Option("group_instance_id", "str | None", "None",
           "Static membership id (needs ``group_id``)."),
    Option("key_deserializer", "Callable[[bytes], KT] | None", "None",
           "``bytes -> key``; sets the records' key type."),
    Option("value_deserializer", "Callable[[bytes], VT] | None", "None",
           "``bytes -> value``; sets the records' value type."),
    Option("fetch_max_wait_ms", "int", "500",
           "How long the broker may wait for ``fetch_min_bytes``."),
    Option("fetch_min_bytes", "int", "1", "Least data a Fetch response should carry."),
    Option("fetch_max_bytes", "int", "52428800", "Most data one Fetch response may carry."),
    Option("max_partition_fetch_bytes", "int", "1048576",
           "Most data per partition in one Fetch."),
    Option("max_poll_records", "int | None", "None",
           "Most records one ``getmany()`` returns (None: no cap)."),
    Option("max_poll_interval_ms", "int", "300000",
           "Longest time between two polls within a group."),
    Option("auto_offset_reset", "str", '"latest"',
           '``"earliest"``, ``"latest"`` or ``"none"`` (raise).'),
    Option("enable_auto_commit", "bool", "True", "Commit consumed offsets in the background."),
    Option("auto_commit_interval_ms", "int", "5000", "Period of those commits."),
    Option("check_crcs", "bool", "True", "Check each batch's CRC32C."),
    Option("isolation_level", "str", '"read_uncommitted"',
           '``"read_uncommitted"`` or ``"read_committed"``.'),
    Option("session_timeout_ms", "int", "10000", "The group drops a member silent this long."),
    Option("heartbeat_interval_ms", "int", "3000",
           "Heartbeat period (below the session timeout)."),
    Option("rebalance_timeout_ms", "int | None", "None",
           "Time allowed to rejoin (default: the session's)."),
    Option("consumer_timeout_ms", "int", "200",
           "How long ``async for``/``getone`` sleep per check."),
    Option("partition_assignment_strategy", "Sequence[Any]", "DEFAULT_ASSIGNORS",
           "Client-side assignors (classic protocol)."),
    Option("exclude_internal_topics", "bool", "True",
           "Hide internal topics from patterns and topics()."),
    Option("group_protocol", "str", '"classic"', '``"classic"`` or ``"consumer"`` (KIP-848).'),
    Option("group_remote_assignor", "str | None", "None",
           "KIP-848 server-side assignor, or ``None``."),
    # The producer's own.
    Option("acks", "int | str", "RESOLVED", '0, 1 or ``"all"``/-1; ``"all"`` unless set.'),
    Option("key_serializer", "Callable[[KT], bytes | None] | None", "None",
           "``key -> bytes``; sets the key type ``send()`` takes."),
    Option("value_serializer", "Callable[[VT], bytes | None] | None", "None",
           "``value -> bytes``; sets the value type ``send()`` takes."),
    Option("compression_type", "str | None", "None",
           '``None``, ``"gzip"``, ``"snappy"``, ``"lz4"``, ``"zstd"``.'),
    Option("compression_level", "int | None", "None",
           "Codec-specific level (None: the codec's default)."),
    Option("max_batch_size", "int", "262144", "Bytes a partition's batch may grow to."),
    Option("partitioner", "Callable[..., int] | None", "None",
           "``(key_bytes, all, available) -> partition`` or None."),
    Option("max_request_size", "int", "1048576",
           "Upper bound of one Produce request and one record."),
    Option("linger_ms", "int", "0", "How long a batch may wait for more records."),
    Option("send_backoff_ms", "int", "100", "Pause before resending after a retriable error."),
    Option("enable_idempotence", "bool", "RESOLVED",
           "On unless set off or incompatible options are given."),
    Option("transactional_id", "str | None", "None", "Makes the producer transactional."),
    Option("transaction_timeout_ms", "int", "60000",
           "The coordinator aborts transactions open longer."),
    Option("buffer_memory", "int", "33554432",
           "Bytes of unsent batches before ``send()`` waits."),
    Option("max_block_ms", "int", "60000",
           "How long ``send()`` may wait for metadata or memory."),
    Option("delivery_timeout_ms", "int", "RESOLVED",
           "Bound from ``send()`` to the outcome (retries\n"
           "included); 120 s, or more if ``linger_ms + request_timeout_ms`` is."),
)  # fmt: skip
OPTIONS = {o.name: o for o in _OPTIONS}

#: The options every client shares, in aiokafka's order (the producer's differs).
SHARED = tuple(o.name for o in _OPTIONS[: _OPTIONS.index(OPTIONS["group_id"])])

_RAISES_INVALID = """\
            aiokafka.option_checks.InvalidOptionError: an unknown option (with the
                closest valid name) or a value of the wrong type; both a
                ``TypeError`` and a ``ValueError``."""


@dataclass(frozen=True)
class Client:
    """One generated constructor: the module, its class, and what differs."""

    path: str
    cls: str
    owner: str  # the client class documented, as a Sphinx reference
    handler: str  # the hand-written subclass that implements _take_options
    imports: str
    names: tuple[str, ...]
    summary: str
    raises: str
    generic: bool = False
    # Parameters before the keyword-only ones: (source, Args entry name, its doc).
    leading: tuple[tuple[str, str, str], ...] = ()
    # The extra argument passed on to _take_options, and its annotation there.
    passed: tuple[str, str] | None = None
    overrides: dict[str, Option] = field(default_factory=dict)


_SUMMARY_CLIENT = """\
        Options are keyword-only, with aiokafka 0.14's names and defaults (see
        :class:`~aiokafka.cluster.config.ClientConfig` for each one's meaning)."""

_COMMON_IMPORTS = """\
from aiokafka.abc import AbstractTokenProvider
from aiokafka.net.frames import DEFAULT_MAX_RESPONSE_SIZE
from aiokafka.net.secret import Secret
"""

CLIENTS = (
    Client(
        path="aiokafka/cluster/_gen_options.py",
        cls="ClientSignature",
        owner=":class:`~aiokafka.cluster.AIOKafkaClient`",
        handler=":class:`~aiokafka.cluster.options.ClientOptions`",
        imports=(
            "import asyncio\nimport ssl\nimport sys\n"
            "from collections.abc import Mapping, Sequence\n"
            "from typing import TYPE_CHECKING, Any\n\n"
            + _COMMON_IMPORTS
            + "from aiokafka.option_checks import DEFAULT_CLIENT_ID\n"
            "from aiokafka.options import given\n\n"
            "if TYPE_CHECKING:\n    from .config import ClientConfig\n"
        ),
        names=SHARED,
        summary=_SUMMARY_CLIENT,
        raises=_RAISES_INVALID + """
            ValueError: a value out of range (names it).
            TypeError: both ``config`` and keyword options.""",
        leading=(
            ("config: ClientConfig | None = None", "config",
             "A validated config instead of the keyword options."),
        ),
        passed=("config", "ClientConfig | None"),
    ),
    Client(
        path="aiokafka/admin/_gen_options.py",
        cls="AdminSignature",
        owner=":class:`~aiokafka.admin.AIOKafkaAdminClient`",
        handler=":class:`~aiokafka.admin.client.AIOKafkaAdminClient`",
        imports=(
            "import asyncio\nimport ssl\nimport sys\n"
            "from collections.abc import Mapping, Sequence\n"
            "from typing import Any\n\n"
            + _COMMON_IMPORTS
            + "from aiokafka.option_checks import DEFAULT_CLIENT_ID\n"
            "from aiokafka.options import given\n"
        ),
        names=SHARED,
        summary=_SUMMARY_CLIENT,
        raises=_RAISES_INVALID + """
            ValueError: a value out of range (names it).""",
        overrides={
            "enable_metrics_push": Option(
                "enable_metrics_push", "bool", "False",
                "Push metrics when the cluster subscribes (KIP-714). Off\n"
                "by default, as in the Java admin client.",
            ),
        },
    ),
    Client(
        path="aiokafka/consumer/_gen_options.py",
        cls="ConsumerSignature",
        owner=":class:`~aiokafka.consumer.AIOKafkaConsumer`",
        handler=":class:`~aiokafka.consumer.options.ConsumerOptions`",
        imports=(
            "import asyncio\nimport ssl\nimport sys\n"
            "from collections.abc import Callable, Mapping, Sequence\n"
            "from typing import Any, Generic\n\n"
            "from aiokafka.abc import AbstractTokenProvider\n"
            "from aiokafka.consumer.group.assignors.roundrobin import (\n"
            "    RoundRobinPartitionAssignor,\n)\n"
            "from aiokafka.net.frames import DEFAULT_MAX_RESPONSE_SIZE\n"
            "from aiokafka.net.secret import Secret\n"
            "from aiokafka.option_checks import DEFAULT_CLIENT_ID\n"
            "from aiokafka.options import given\n"
            "from aiokafka.structs import KT, VT\n\n"
            "#: aiokafka's default ``partition_assignment_strategy``.\n"
            "DEFAULT_ASSIGNORS: tuple[Any, ...] = (RoundRobinPartitionAssignor,)\n"
        ),
        names=(
            *SHARED,
            "group_id", "group_instance_id", "key_deserializer", "value_deserializer",
            "fetch_max_wait_ms", "fetch_min_bytes", "fetch_max_bytes",
            "max_partition_fetch_bytes", "max_poll_records", "max_poll_interval_ms",
            "auto_offset_reset", "enable_auto_commit", "auto_commit_interval_ms",
            "check_crcs", "isolation_level", "session_timeout_ms", "heartbeat_interval_ms",
            "rebalance_timeout_ms", "consumer_timeout_ms", "partition_assignment_strategy",
            "exclude_internal_topics", "group_protocol", "group_remote_assignor",
        ),
        summary="""\
        Options are keyword-only, with aiokafka 0.14's names and defaults except
        where ``docs/migration-from-aiokafka.md`` says otherwise; each one's meaning
        is in the configuration reference (``docs/``) and on
        :class:`~aiokafka.consumer.config.ConsumerConfig` /
        :class:`~aiokafka.cluster.config.ClientConfig`.""",
        raises=_RAISES_INVALID + """
            ValueError: a value out of range or conflicting options (names them).""",
        generic=True,
        leading=(
            ("*topics: str", "*topics",
             "Topics to subscribe to (same as calling ``subscribe()``)."),
        ),
        passed=("topics", "tuple[str, ...]"),
        overrides={
            "client_rack": Option(
                "client_rack", "str | None", "None",
                "The client's rack (fetch from the closest replica).",
            ),
        },
    ),
    Client(
        path="aiokafka/producer/_gen_options.py",
        cls="ProducerSignature",
        owner=":class:`~aiokafka.producer.AIOKafkaProducer`",
        handler=":class:`~aiokafka.producer.options.ProducerOptions`",
        imports=(
            "import asyncio\nimport ssl\nimport sys\n"
            "from collections.abc import Callable, Mapping, Sequence\n"
            "from typing import Any, Generic\n\n"
            + _COMMON_IMPORTS
            + "from aiokafka.options import RESOLVED, given\n"
            "from aiokafka.structs import KT, VT\n"
        ),
        names=(
            "loop", "bootstrap_servers", "client_id", "metadata_max_age_ms",
            "request_timeout_ms", "api_version", "acks", "key_serializer",
            "value_serializer", "compression_type", "compression_level", "max_batch_size",
            "partitioner", "max_request_size", "linger_ms", "send_backoff_ms",
            "retry_backoff_ms", "security_protocol", "ssl_context",
            "connections_max_idle_ms", "enable_idempotence", "transactional_id",
            "transaction_timeout_ms", "sasl_mechanism", "sasl_plain_username",
            "sasl_plain_password", "sasl_kerberos_service_name", "sasl_kerberos_domain_name",
            "sasl_oauth_token_provider", "sasl_scram_token_auth", "reconnect_backoff_ms",
            "reconnect_backoff_max_ms",
            "allow_auto_topic_creation", "max_response_size", "enable_metrics_push",
            "client_rack", "buffer_memory", "max_block_ms", "delivery_timeout_ms",
            "max_in_flight_requests_per_connection",
        ),
        summary="""\
        Options are keyword-only, with aiokafka 0.14's names and defaults except
        where ``docs/migration-from-aiokafka.md`` says otherwise (idempotence and
        ``acks="all"`` by default, 256 KiB batches); each one's meaning is in the
        configuration reference (``docs/``) and on
        :class:`~aiokafka.producer.config.ProducerConfig`.""",
        raises=_RAISES_INVALID + """
            ValueError: a value out of range or conflicting options (names them).""",
        generic=True,
        overrides={
            "client_id": Option(
                "client_id", "str | None", '"aiokafka-producer"',
                "Sent in request headers (broker logs, quotas).",
            ),
        },
    ),
)  # fmt: skip


_HEADER = "GENERATED by ``python -m tools.codegen`` (``tools/codegen/options.py``): DO NOT EDIT."


def _args_entry(name: str, doc: str) -> str:
    first, *rest = doc.split("\n")
    lines = [f"            {name}: {first}"]
    lines.extend(f"                {line}" for line in rest)
    return "\n".join(lines)


def _render(client: Client) -> str:
    options = [client.overrides.get(n, OPTIONS[n]) for n in client.names]
    params = [f"        {source}," for source, _, _ in client.leading]
    if not any(source.startswith("*") for source, _, _ in client.leading):
        params.append("        *,")
    params += [f"        {o.name}: {o.annotation} = {o.default}," for o in options]
    args = [_args_entry(name, doc) for _, name, doc in client.leading]
    args += [_args_entry(o.name, o.doc) for o in options]
    args.append(_args_entry("**configs", "Nothing else: an unknown name raises."))
    extra_arg = f", {client.passed[0]}" if client.passed else ""
    extra_param = f", {client.passed[0]}: {client.passed[1]}" if client.passed else ""
    base = "(Generic[KT, VT])" if client.generic else ""
    take_params = f"self, options: dict[str, Any], unknown: Mapping[str, Any]{extra_param}"
    take_options = f"    def _take_options({take_params}) -> None:"
    if len(take_options) > 100:  # as ruff format writes it
        take_options = f"    def _take_options(\n        {take_params}\n    ) -> None:"
    nl = "\n"
    return f'''"""{_HEADER}

The signature of {client.owner}'s constructor;
{client.handler} validates what it is given.
"""

from __future__ import annotations

{client.imports}
# typing_extensions only where typing lacks it: importing it costs ~3 ms.
if sys.version_info >= (3, 11):
    from typing import Never
else:
    from typing_extensions import Never

__all__ = ["{client.cls}"]


class {client.cls}{base}:
    """Every option of {client.owner}
    as a typed keyword parameter (names, types and defaults for ``inspect.signature()``,
    IDEs and mypy)."""

    def __init__(
        self,
{nl.join(params)}
        **configs: Never,
    ) -> None:
        """Validate the options; nothing connects before ``start()``.

{client.summary}

        Args:
{nl.join(args)}

        Raises:
{client.raises}
        """
        self._take_options(given(locals()), configs{extra_arg})

{take_options}
        """Validate ``options`` (those passed, by name) and set the client up; raise
        for ``unknown`` (any other keyword)."""
        raise NotImplementedError  # pragma: no cover - the client's options module
'''


def generate(spec_dir: Path) -> dict[str, str]:
    """Each client's signature module (``spec_dir`` is not read)."""
    del spec_dir
    return {client.path: _render(client) for client in CLIENTS}
