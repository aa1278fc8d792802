"""Config operations: describe, alter (whole set) and incrementally alter configs.

Routing: a ``BROKER`` or ``BROKER_LOGGER`` resource naming a broker id goes to that
broker (only it knows its static and per-broker configs); everything else (topics,
the cluster-wide broker default ``""``, groups, client metrics) goes to any broker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from aiokafka.admin._base import AdminBase, check, error_for, instances, raise_first
from aiokafka.admin.results import (
    ConfigAlterationResult,
    ConfigDescription,
    ConfigEntry,
    ConfigSynonym,
    group_as_responses,
)
from aiokafka.admin.types import (
    AlterConfigOp,
    ConfigResource,
    ConfigResourceType,
    ConfigSource,
    ConfigType,
)
from aiokafka.errors import KafkaError, UnknownTopicOrPartitionError
from aiokafka.protocol._gen import alter_configs as _ac
from aiokafka.protocol._gen import describe_configs as _dc
from aiokafka.protocol._gen import incremental_alter_configs as _iac
from aiokafka.protocol._gen import list_client_metrics_resources as _lcmr
from aiokafka.protocol.request import Request

__all__ = ["ConfigsMixin"]

_PER_BROKER = (ConfigResourceType.BROKER, ConfigResourceType.BROKER_LOGGER)


def _resources(arg: str, values: Iterable[object]) -> list[ConfigResource]:
    out = instances(arg, values, ConfigResource)
    for r in out:
        if r.resource_type in _PER_BROKER and r.name and not r.name.isdigit():
            raise ValueError(f"{arg}: a {r.resource_type.name} name must be a broker id")
    if len(set(out)) != len(out):
        raise ValueError(f"{arg}: the same resource is listed twice")
    return out


def _enum(cls: Any, value: int, default: Any) -> Any:
    try:
        return cls(value)
    except ValueError:
        return default


class ConfigsMixin(AdminBase):
    """Config operations of :class:`~aiokafka.admin.AIOKafkaAdminClient`."""

    def _config_node(self, resource: ConfigResource) -> int | None:
        if resource.resource_type in _PER_BROKER and resource.name:
            return int(resource.name)
        return None

    async def _alter(
        self,
        resources: list[ConfigResource],
        request: Callable[..., Request[Any]],
        resource: Callable[..., Any],
        configs: Callable[[ConfigResource], list[Any]],
        validate_only: bool,
        verb: str,
    ) -> dict[ConfigResource, Any]:
        """Send an AlterConfigs or IncrementalAlterConfigs ``request`` (its class and
        its resource class: both APIs have the same shape) for ``resources``, with
        ``configs(r)`` as each resource's entries; the outcome per resource."""

        async def send(node: int, group: list[ConfigResource]) -> dict[ConfigResource, Any]:
            entries = [
                resource(
                    resource_type=int(r.resource_type), resource_name=r.name, configs=configs(r)
                )
                for r in group
            ]
            req = request(resources=entries, validate_only=bool(validate_only))
            response = await self._client.send(node, req)
            return _alter_outcome(response.responses, verb)

        return await self._by_node(resources, send)

    async def _by_node(
        self,
        resources: list[ConfigResource],
        send: Callable[[int, list[ConfigResource]], Awaitable[dict[ConfigResource, Any]]],
    ) -> dict[ConfigResource, Any]:
        """Send each group of resources to its broker concurrently; retry per item."""

        async def attempt(pending: list[ConfigResource]) -> dict[ConfigResource, Any]:
            groups: dict[int | None, list[ConfigResource]] = {}
            for r in pending:
                groups.setdefault(self._config_node(r), []).append(r)
            nodes = list(groups)
            answers = await asyncio.gather(
                *(send(self._any_node() if n is None else n, groups[n]) for n in nodes),
                return_exceptions=True,
            )
            out: dict[ConfigResource, Any] = {}
            for node, answer in zip(nodes, answers, strict=True):
                if isinstance(answer, KafkaError):
                    out.update(dict.fromkeys(groups[node], answer))
                elif isinstance(answer, BaseException):
                    raise answer
                else:
                    out.update(answer)
            return out

        return await self._retry_items(
            resources, attempt, deadline=self._deadline(), final=(UnknownTopicOrPartitionError,)
        )

    async def list_client_metrics_resources(self) -> list[str]:
        """Names of the cluster's client-metrics subscriptions, sorted: the
        ``CLIENT_METRICS`` config resources (KIP-714) that ``describe_configs`` and
        ``incremental_alter_configs`` read and change (ListClientMetricsResources,
        Kafka 3.7 and later).

        Raises:
            aiokafka.errors.UnsupportedVersionError: the broker lacks the API.
        """
        response = await self._send_any(_lcmr.ListClientMetricsResourcesRequest())
        check(response.error_code, None, "list client metrics resources")
        return sorted(r.name for r in response.client_metrics_resources)

    async def describe_configs(
        self,
        config_resources: Sequence[ConfigResource],
        include_synonyms: bool = False,
        include_documentation: bool = False,
        *,
        raise_errors: bool = False,
    ) -> list[ConfigDescription]:
        """Describe the configs of topics, brokers, groups, ...

        Per item, as in aiokafka: a resource that could not be described (e.g.
        ``UnknownTopicOrPartitionError`` for a missing topic,
        ``InvalidRequestError`` for a bad broker logger name) comes back with its
        ``error`` set, no configs and a non-zero code in ``.resources``.

        Args:
            config_resources: What to describe; a resource's ``configs`` keys, if
                given, restrict the answer to those names.
            include_synonyms: Also report lower-precedence values (e.g. the static
                broker value under a dynamic one).
            include_documentation: Also report each config's documentation.
            raise_errors: Raise the first failed resource's error class (its
                message names every failure) instead of returning it.

        Returns:
            One description per resource, in order. aiokafka's shape: aiokafka sent
            one request per broker resource's broker and one for all other
            resources, and returned the responses; the first item of each such
            request's resources has ``.resources`` listing all of them (the others
            an empty list), so ``resp[0].resources[i]`` and loops over every item's
            ``.resources`` read as they did.

        Raises:
            aiokafka.errors.KafkaError: a per-resource error with ``raise_errors``;
                a request that failed as a whole always.
        """
        resources = _resources("config_resources", config_resources)

        async def send(node: int, group: list[ConfigResource]) -> dict[ConfigResource, Any]:
            request = _dc.DescribeConfigsRequest(
                resources=[
                    _dc.DescribeConfigsResource(
                        resource_type=int(r.resource_type),
                        resource_name=r.name,
                        configuration_keys=None if r.configs is None else list(r.configs),
                    )
                    for r in group
                ],
                include_synonyms=bool(include_synonyms),
                include_documentation=bool(include_documentation),
            )
            response = await self._client.send(node, request)
            out: dict[ConfigResource, Any] = {}
            for res in response.results:
                key = ConfigResource(res.resource_type, res.resource_name)
                what = f"describe configs of {key.resource_type.name} {res.resource_name!r}"
                out[key] = error_for(res.error_code, res.error_message, what) or (
                    ConfigDescription(
                        key.resource_type,
                        res.resource_name,
                        {c.name: _entry(c) for c in res.configs},
                    )
                )
            return out

        outcome = await self._by_node(resources, send)
        if raise_errors:
            raise_first(outcome)
        described = [
            ConfigDescription(r.resource_type, r.name, {}, error=v)
            if isinstance(v, KafkaError)
            else v
            for r, v in ((r, outcome[r]) for r in resources)
        ]
        return group_as_responses(described, _aiokafka_request)

    async def alter_configs(
        self,
        config_resources: Sequence[ConfigResource],
        validate_only: bool = False,
        *,
        raise_errors: bool = False,
    ) -> list[ConfigAlterationResult]:
        """Replace the dynamic configs of resources (legacy AlterConfigs).

        Every dynamic config of a resource not listed in its ``configs`` is reset to
        its default; prefer :meth:`incremental_alter_configs` to change a few.

        Per item, as in aiokafka: a resource that could not be altered
        (``InvalidConfigurationError`` for an unknown name or bad value,
        ``UnknownTopicOrPartitionError`` for a missing topic, ...) comes back with
        its ``error`` set and a non-zero code in ``.resources``; the others still
        change.

        Args:
            config_resources: Resources with the full set of configs to keep.
            validate_only: Check without changing anything.
            raise_errors: Raise the first failed resource's error class (its
                message names every failure) instead of returning it.

        Returns:
            One item per resource, in order; each answers aiokafka's ``.resources``,
            grouped as aiokafka's requests were (see :meth:`describe_configs`).

        Raises:
            aiokafka.errors.KafkaError: a per-resource error with ``raise_errors``;
                a request that failed as a whole always.
        """
        resources = _resources("config_resources", config_resources)
        for r in resources:
            if r.configs is None:
                raise ValueError(f"config_resources: {r.name!r} has no configs to set")

        def configs(r: ConfigResource) -> list[_ac.AlterableConfig]:
            return [_ac.AlterableConfig(name=k, value=v) for k, v in (r.configs or {}).items()]

        outcome = await self._alter(
            resources,
            _ac.AlterConfigsRequest,
            _ac.AlterConfigsResource,
            configs,
            validate_only,
            "alter configs",
        )
        if raise_errors:
            raise_first(outcome)
        altered = [ConfigAlterationResult(r.resource_type, r.name, outcome[r]) for r in resources]
        return group_as_responses(altered, _aiokafka_request)

    async def incremental_alter_configs(
        self,
        alterations: Mapping[ConfigResource, Sequence[AlterConfigOp]],
        validate_only: bool = False,
    ) -> None:
        """Change individual configs (KIP-339): ``SET``, ``DELETE`` (revert to the
        default), ``APPEND``/``SUBTRACT`` (list-valued configs).

        Args:
            alterations: Resource -> operations on it.
            validate_only: Check without changing anything.

        Raises:
            aiokafka.errors.InvalidConfigurationError: unknown name, bad value, or an
                APPEND/SUBTRACT on a non-list config.
            aiokafka.errors.UnknownTopicOrPartitionError: a topic does not exist.
                Per resource: the others still change; the exception names every
                failure.
        """
        resources = _resources("alterations", alterations)
        for r in resources:
            ops = list(alterations[r])
            if not ops or not all(isinstance(op, AlterConfigOp) for op in ops):
                raise TypeError(
                    f"alterations[{r.name!r}] must be a non-empty list of AlterConfigOp"
                )

        def configs(r: ConfigResource) -> list[_iac.AlterableConfig]:
            return [
                _iac.AlterableConfig(name=op.name, config_operation=int(op.op_type), value=op.value)
                for op in alterations[r]
            ]

        outcome = await self._alter(
            resources,
            _iac.IncrementalAlterConfigsRequest,
            _iac.AlterConfigsResource,
            configs,
            validate_only,
            "incrementally alter configs",
        )
        raise_first(outcome)


def _aiokafka_request(item: ConfigDescription | ConfigAlterationResult) -> object:
    # aiokafka 0.14 sent BROKER resources to that broker, one request per broker,
    # and every other resource in one request to any broker.
    if item.resource_type is ConfigResourceType.BROKER and item.name.isdigit():
        return int(item.name)
    return None


def _alter_outcome(
    responses: Iterable[_ac.AlterConfigsResourceResponse | _iac.AlterConfigsResourceResponse],
    verb: str,
) -> dict[ConfigResource, Any]:
    out: dict[ConfigResource, Any] = {}
    for res in responses:
        key = ConfigResource(res.resource_type, res.resource_name)
        what = f"{verb} of {key.resource_type.name} {res.resource_name!r}"
        out[key] = error_for(res.error_code, res.error_message, what)
    return out


def _entry(c: Any) -> ConfigEntry:
    return ConfigEntry(
        c.name,
        c.value,
        bool(c.read_only),
        bool(c.is_default) or c.config_source == ConfigSource.DEFAULT_CONFIG,
        _enum(ConfigSource, c.config_source, ConfigSource.UNKNOWN),
        bool(c.is_sensitive),
        [
            ConfigSynonym(s.name, s.value, _enum(ConfigSource, s.source, ConfigSource.UNKNOWN))
            for s in c.synonyms or ()
        ],
        _enum(ConfigType, c.config_type, ConfigType.UNKNOWN),
        c.documentation,
    )
