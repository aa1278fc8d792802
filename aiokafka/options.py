"""What the client facades share: from a constructor's keyword parameters to its
options, and what ``async with`` means.

Each client constructor (producer, consumer, admin, ``AIOKafkaClient``) declares every
option as a typed keyword-only parameter, so ``inspect.signature()``, ``help()``, IDEs
and mypy see names, types and defaults. The defaults repeat those of the config
dataclasses (``tests/unit/test_constructor_signatures.py`` fails if one drifts); the
config classes stay the one place that validates and resolves them.

The constructors end with ``**configs: Never``: a static checker rejects any other
keyword, and at run time :func:`reject_unknown` raises
:class:`~aiokafka.option_checks.InvalidOptionError` naming the closest option, as before.

The clients also answer aiokafka 0.14's private attribute names that tracing
integrations written for it read to tag their spans: Datadog's ``ddtrace`` reads
``client._bootstrap_servers`` in every traced ``send()``, ``getone()`` and
``getmany()``, so each of those calls raised ``AttributeError``; OpenTelemetry's
aiokafka instrumentation also reads ``_client_id`` and calls
``client._wait_on_metadata(topic)`` (:class:`ClientAttrs`, a base of
``AIOKafkaClient``). The producer's and consumer's such names are in their own modules
(the consumer's views in ``consumer/internals014.py``). The attributes are read-only;
nothing of ours uses them.

``async with client:`` calls ``start()`` on entry and, on exit (with or without an
exception, which is never suppressed), ``stop()`` (producer, consumers:
:class:`StartStop`) or ``close()`` (admin and cluster clients: :class:`StartClose`),
as aiokafka 0.14 does.
"""

from __future__ import annotations

import random
import socket
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar

if TYPE_CHECKING:
    import asyncio

    from aiokafka.cluster.config import ClientConfig
    from aiokafka.cluster.metadata import ClusterMetadata

__all__ = [
    "RESOLVED",
    "ClientAttrs",
    "StartClose",
    "StartStop",
    "given",
    "reject_unknown",
]


class _Resolved:
    """The default of an option whose value the config derives from other options
    (the producer's ``acks``, ``enable_idempotence``, ``delivery_timeout_ms``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<resolved from the other options>"


#: Default of a parameter left for the config class to resolve: not passed on.
RESOLVED: Final[Any] = _Resolved()

# Names in a constructor's locals() that are not options.
_NOT_OPTIONS = frozenset({"self", "topics", "configs", "config", "__class__"})


def reject_unknown(owner: str, configs: Mapping[str, Any], known: Iterable[str]) -> None:
    """Raise for the first keyword that is not a declared parameter.

    Raises:
        aiokafka.option_checks.InvalidOptionError: naming it and the closest option.
    """
    for name in configs:
        # Imported on this error only: the client imports do not load net/config.py
        # (a dataclass) until a constructor builds its config.
        from aiokafka.option_checks import unknown_option

        raise unknown_option(owner, name, known)


def given(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The options among a constructor's ``locals()`` (read first thing in it), without
    those left at :data:`RESOLVED`."""
    return {
        name: value
        for name, value in arguments.items()
        if name not in _NOT_OPTIONS and value is not RESOLVED
    }


class _Startable(Protocol):
    async def start(self) -> None: ...


class _Exiting(_Startable, Protocol):
    async def _exit_context(self) -> None: ...


class _Stoppable(Protocol):
    async def stop(self) -> None: ...


class _Closable(Protocol):
    async def close(self) -> None: ...


_S = TypeVar("_S", bound=_Startable)


class _AsyncWith:
    async def __aenter__(self: _S) -> _S:
        await self.start()
        return self

    async def __aexit__(
        self: _Exiting,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._exit_context()


class StartStop(_AsyncWith):
    """Mixin: ``async with`` runs ``start()``, then ``stop()`` on the way out."""

    async def _exit_context(self: _Stoppable) -> None:
        await self.stop()


class StartClose(_AsyncWith):
    """Mixin: ``async with`` runs ``start()``, then ``close()`` on the way out."""

    async def _exit_context(self: _Closable) -> None:
        await self.close()


class _HasClientConfig(Protocol):
    @property
    def config(self) -> ClientConfig: ...

    @property
    def cluster(self) -> ClusterMetadata: ...

    def add_topic(self, topic: str) -> asyncio.Future[bool]: ...


class ClientAttrs:
    """``AIOKafkaClient``'s aiokafka 0.14 names beyond its own API (see the module
    docstring): private attributes integrations read, ``hosts``, ``get_random_node``."""

    __slots__ = ()

    @property
    def _bootstrap_servers(self: _HasClientConfig) -> str | Sequence[str]:
        """``bootstrap_servers`` as it was given."""
        return self.config.bootstrap_servers

    @property
    def _client_id(self: _HasClientConfig) -> str | None:
        """The client id sent in request headers."""
        return self.config.client_id

    @property
    def hosts(self: _HasClientConfig) -> list[tuple[str, int, socket.AddressFamily]]:
        """The bootstrap servers as aiokafka listed them: ``(host, port, family)``."""
        return [
            (host, port, socket.AF_INET6 if ":" in host else socket.AF_INET)
            for host, port in self.config.bootstrap_addresses
        ]

    def get_random_node(self: _HasClientConfig) -> int | None:
        """A random broker id from the cached metadata, or ``None`` if none is known."""
        brokers = [int(b.nodeId) for b in self.cluster.brokers()]
        return random.choice(brokers) if brokers else None

    async def _wait_on_metadata(self: _HasClientConfig, topic: str) -> set[int]:
        """The partitions of ``topic``, its metadata fetched first if not known yet
        (OpenTelemetry's aiokafka instrumentation calls it before each ``send()``).

        Raises:
            aiokafka.errors.UnknownTopicOrPartitionError: the cluster has no such topic.
        """
        partitions = self.cluster.partitions_for_topic(topic)
        if partitions is None:
            await self.add_topic(topic)
            partitions = self.cluster.partitions_for_topic(topic)
            if partitions is None:
                from aiokafka.errors import UnknownTopicOrPartitionError  # rarely used

                raise UnknownTopicOrPartitionError(f"topic {topic!r}")
        return set(partitions)
