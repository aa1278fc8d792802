"""Reference tables generated from the code at docs build time, so they cannot drift.

Two directives:

``.. aiokafka-config-reference:: producer|consumer|admin``
    Every keyword option the client's constructor accepts, with its type, default
    and meaning. Options and types come from the config dataclasses
    (``ProducerConfig``, ``ConsumerConfig``, ``ClientConfig``), defaults from a
    config built with no arguments (what a client really gets), meanings from the
    ``Attributes:`` sections of the config classes' docstrings, then
    :mod:`option_notes` for options no docstring describes.

``.. aiokafka-error-table:: broker|retriable|client|client-retriable``
    The broker error codes (``aiokafka.errors.ERROR_CLASSES``, generated from
    Kafka's table) with their ``retriable`` / ``invalid_metadata`` /
    ``transaction_fatal`` flags, or the errors the client raises itself; the
    ``retriable`` kinds list only those with ``retriable`` set.

An option without a meaning, or a note for an option no client takes, is a build
warning (an error under ``-W``). The functions are importable without Sphinx for
``tests/unit/test_docs_reference.py``.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import option_notes

CLIENTS = ("producer", "consumer", "admin")

_CLASS_NAMES = {
    "producer": "aiokafka.producer.AIOKafkaProducer",
    "consumer": "aiokafka.consumer.AIOKafkaConsumer",
    "admin": "aiokafka.admin.AIOKafkaAdminClient",
}

_ATTRIBUTE = re.compile(r"^ {4}(\w+): ?(.*)$")


@dataclass(frozen=True)
class Option:
    """One keyword option of one client, as the reference shows it."""

    name: str
    type: str
    default: str
    meaning: str | None


def attribute_docs(cls: type) -> dict[str, str]:
    """The ``Attributes:`` section of ``cls``'s Google-style docstring, by name."""
    doc = inspect.getdoc(cls) or ""
    found: dict[str, str] = {}
    inside = False
    current: str | None = None
    for line in doc.splitlines():
        if line.strip() == "Attributes:":
            inside = True
            continue
        if not inside:
            continue
        if line and not line.startswith(" "):
            break  # the next section, or prose after the list
        match = _ATTRIBUTE.match(line)
        if match:
            current = match.group(1)
            found[current] = match.group(2).strip()
        elif current is not None and line.strip():
            found[current] += " " + line.strip()
    return found


def _meaning_sources() -> list[dict[str, str]]:
    from aiokafka.cluster.config import ClientConfig
    from aiokafka.net.config import ConnectionConfig
    from aiokafka.producer.config import ProducerConfig

    return [
        attribute_docs(ProducerConfig),
        attribute_docs(ClientConfig),
        attribute_docs(ConnectionConfig),
        option_notes.MEANINGS,
    ]


def _meaning(name: str, sources: list[dict[str, str]]) -> str | None:
    for source in sources:
        if source.get(name):
            extra = option_notes.APPENDED.get(name)
            return f"{source[name]} {extra}" if extra else source[name]
    return None


def _format_value(name: str, value: Any) -> str:
    if isinstance(value, tuple | list):
        names = [getattr(v, "__name__", repr(v)) for v in value]
        return "``({}{})``".format(", ".join(names), "," if len(names) == 1 else "")
    if callable(value):
        return f"``{getattr(value, '__name__', repr(value))}``"
    text = f"``{value!r}``"
    if isinstance(value, int) and not isinstance(value, bool):
        if name.endswith("_ms") and value >= 1000:
            text += f" ({value / 1000:g} s)"
        elif value >= 1024 and value % 1024 == 0 and not name.endswith("_ms"):
            kib = value // 1024
            text += f" ({kib // 1024} MiB)" if kib % 1024 == 0 else f" ({kib} KiB)"
    return text


def _type_text(annotation: Any) -> str:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return text or repr(annotation)


def _options(
    fields: Iterable[dataclasses.Field[Any]],
    defaults: Callable[[str], Any],
    sources: list[dict[str, str]],
) -> list[Option]:
    out = []
    for f in fields:
        name = f.name
        type_text = option_notes.TYPES.get(name) or _type_text(f.type)
        default = option_notes.DEFAULTS.get(name) or _format_value(name, defaults(name))
        out.append(Option(name, type_text, default, _meaning(name, sources)))
    return sorted(out, key=lambda o: o.name)


def client_options(client: str) -> list[Option]:
    """Every keyword option of ``client`` (one of :data:`CLIENTS`), sorted by name.

    Raises:
        ValueError: an unknown client.
    """
    from aiokafka.admin.config import admin_config
    from aiokafka.cluster.config import ClientConfig
    from aiokafka.consumer.config import ConsumerConfig
    from aiokafka.producer.config import ProducerConfig

    sources = _meaning_sources()
    shared = [f for f in dataclasses.fields(ClientConfig) if f.init]
    loop_field = next(f for f in dataclasses.fields(ProducerConfig) if f.name == "loop")
    if client == "producer":
        producer = ProducerConfig.from_kwargs()
        fields = [f for f in dataclasses.fields(ProducerConfig) if f.init]
        return _options(fields, lambda n: getattr(producer, n), sources)
    if client == "consumer":
        consumer = ConsumerConfig.from_options()
        own = [f for f in dataclasses.fields(ConsumerConfig) if f.init and f.name != "client"]
        own_names = {f.name for f in own}

        def consumer_default(name: str) -> Any:
            if name == "loop":
                return None
            return getattr(consumer if name in own_names else consumer.client, name)

        return _options([*own, *shared, loop_field], consumer_default, sources)
    if client == "admin":
        admin = admin_config({})
        return _options(
            [*shared, loop_field],
            lambda n: None if n == "loop" else getattr(admin, n),
            sources,
        )
    raise ValueError(f"unknown client {client!r}; expected one of {CLIENTS}")


def problems() -> list[str]:
    """What keeps the reference from being complete: options with no meaning, and
    notes about options that no client takes (left behind by a removed option)."""
    found: list[str] = []
    every: set[str] = set()
    for client in CLIENTS:
        for option in client_options(client):
            every.add(option.name)
            if option.meaning is None:
                found.append(
                    f"{client} option {option.name!r} has no meaning: document it in its "
                    "config class's Attributes section (or docs/_ext/option_notes.py)"
                )
    for table in ("MEANINGS", "APPENDED", "DEFAULTS", "TYPES"):
        for name in sorted(set(getattr(option_notes, table)) - every):
            found.append(f"docs/_ext/option_notes.py {table} names {name!r}, which no client takes")
    return found


def render_options(client: str) -> str:
    """reStructuredText for ``client``'s options: one labelled entry per option."""
    lines = [
        f"Keyword options of :class:`~{_CLASS_NAMES[client]}` ({len(client_options(client))}).",
        "",
    ]
    for option in client_options(client):
        lines += [
            f".. _config-{client}-{option.name}:",
            "",
            f"``{option.name}``",
            f"   :Type: ``{option.type}``",
            f"   :Default: {option.default}",
            "",
            f"   {option.meaning or '(undocumented)'}",
            "",
        ]
    return "\n".join(lines)


def _flag(value: bool) -> str:
    return "yes" if value else ""


def render_broker_errors(retriable_only: bool = False) -> str:
    """A table of every broker error code (or only the retriable ones) and what the
    client does with it."""
    from aiokafka.errors import ERROR_CLASSES

    lines = [
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 6 30 30 8 8 8",
        "",
        "   * - Code",
        "     - Class (``aiokafka.errors``)",
        "     - Kafka name",
        "     - Retriable",
        "     - Refresh metadata",
        "     - Fatal in a transaction",
    ]
    for code, cls in sorted(ERROR_CLASSES.items()):
        if retriable_only and not cls.retriable:
            continue
        lines += [
            f"   * - {code}",
            f"     - ``{cls.__name__}``",
            f"     - ``{getattr(cls, 'error_name', '')}``",
            f"     - {_flag(cls.retriable)}",
            f"     - {_flag(cls.invalid_metadata)}",
            f"     - {_flag(cls.transaction_fatal)}",
        ]
    return "\n".join(lines)


def render_client_errors(retriable_only: bool = False) -> str:
    """A table of the errors the client detects itself (not broker error codes), or
    only the retriable ones."""
    import aiokafka.errors as errors

    classes = {
        obj
        for obj in vars(errors).values()
        if isinstance(obj, type)
        and issubclass(obj, errors.KafkaError)
        and not issubclass(obj, errors.BrokerResponseError)
        and (obj.retriable or not retriable_only)
    }
    lines = [
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 30 8 62",
        "",
        "   * - Class (``aiokafka.errors``)",
        "     - Retriable",
        "     - Meaning",
    ]
    for cls in sorted(classes, key=lambda c: c.__name__):
        doc = (inspect.getdoc(cls) or "").split("\n\n")[0].replace("\n", " ")
        lines += [
            f"   * - ``{cls.__name__}``",
            f"     - {_flag(cls.retriable)}",
            f"     - {doc}",
        ]
    return "\n".join(lines)


def setup(app: Any) -> dict[str, Any]:
    """Register the two directives (Sphinx extension entry point)."""
    from docutils.nodes import Node
    from sphinx.util import logging
    from sphinx.util.docutils import SphinxDirective

    logger = logging.getLogger(__name__)
    root = Path(__file__).resolve().parents[2]
    watched = [
        root / "aiokafka" / path
        for path in (
            "producer/config.py",
            "consumer/config.py",
            "cluster/config.py",
            "net/config.py",
            "option_checks.py",
            "admin/config.py",
            "errors.py",
            "_gen/error_codes.py",
        )
    ] + [Path(option_notes.__file__)]

    class _Generated(SphinxDirective):
        required_arguments = 1

        def _parse(self, text: str) -> list[Node]:
            for path in watched:
                self.env.note_dependency(str(path))
            return self.parse_text_to_nodes(text)

    class ConfigReference(_Generated):
        def run(self) -> list[Node]:
            client = self.arguments[0]
            if client not in CLIENTS:
                logger.warning("unknown client %r", client, location=self.get_location())
                return []
            return self._parse(render_options(client))

    class ErrorTable(_Generated):
        def run(self) -> list[Node]:
            render = {
                "broker": render_broker_errors,
                "retriable": lambda: render_broker_errors(retriable_only=True),
                "client": render_client_errors,
                "client-retriable": lambda: render_client_errors(retriable_only=True),
            }.get(self.arguments[0])
            if render is None:
                logger.warning(
                    "unknown error table %r", self.arguments[0], location=self.get_location()
                )
                return []
            return self._parse(render())

    def check(app: Any) -> None:
        for problem in problems():
            logger.warning("config reference: %s", problem)

    app.add_directive("aiokafka-config-reference", ConfigReference)
    app.add_directive("aiokafka-error-table", ErrorTable)
    app.connect("builder-inited", check)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
