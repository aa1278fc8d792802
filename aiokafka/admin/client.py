"""``AIOKafkaAdminClient``: the admin facade over the shared cluster client.

The operations live in mixins by responsibility (``topics.py``, ``configs.py``,
``groups.py``, ``offsets.py``, ``acls.py``, ``users.py``, ``replicas.py``,
``transactions.py``, ``quotas.py``, ``quorum.py``, ``tokens.py``); this module adds
the lifecycle and the feature description.

Error policy (each method's docstring says which applies):

* **Per item** (what aiokafka 0.14 returned as error codes: ``create_topics``,
  ``delete_topics``, ``describe_topics``, ``describe_configs``, ``alter_configs``,
  ``describe_consumer_groups``; and naturally partial operations:
  ``delete_consumer_groups``, ``elect_leaders``, ``describe_log_dirs``): the result
  carries a typed error (or ``None``) per item, and aiokafka's ``error_code``
  fields are non-zero; nothing is raised for them. The first six take a
  keyword-only ``raise_errors=True`` to raise instead (as below).
* **Raise** (the other methods, and those aiokafka 0.14 raised from:
  ``create_partitions``, ``list_consumer_groups``, ``list_consumer_group_offsets``,
  ``delete_records``, ``find_coordinator``): a per-item broker error is raised as
  its typed class from :mod:`aiokafka.errors`. Items of a batch are independent, so
  the others have taken effect; the exception's class is that of the first failure
  and its message names every failed item.

A request that fails as a whole (no broker, a non-retriable top-level error,
retries exhausted) always raises.

Retriable errors (NOT_CONTROLLER, NOT_COORDINATOR, NOT_LEADER_OR_FOLLOWER, lost
connections, ...) are retried transparently by the shared client's retry policy
until ``request_timeout_ms`` (plus the operation's ``timeout_ms``) has passed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aiokafka.admin._base import check, gather_all
from aiokafka.admin._gen_options import AdminSignature
from aiokafka.admin.acls import AclsMixin
from aiokafka.admin.config import ADMIN_OPTIONS, admin_config
from aiokafka.admin.configs import ConfigsMixin
from aiokafka.admin.groups import GroupsMixin, check_group_id
from aiokafka.admin.log_dirs import LogDirsMixin
from aiokafka.admin.offsets import OffsetsMixin
from aiokafka.admin.quorum import QuorumMixin
from aiokafka.admin.quotas import QuotasMixin
from aiokafka.admin.replicas import ReplicasMixin
from aiokafka.admin.results import FeatureMetadata, GroupOffsetDescription
from aiokafka.admin.share_groups import ShareGroupsMixin
from aiokafka.admin.tokens import TokensMixin
from aiokafka.admin.topics import TopicsMixin
from aiokafka.admin.transactions import TransactionsMixin
from aiokafka.admin.types import (
    FeatureUpdate,
    IsolationLevel,
    OffsetSpec,
    check_count,
)
from aiokafka.admin.users import UsersMixin
from aiokafka.cluster import AIOKafkaClient, ClientConfig
from aiokafka.errors import IllegalStateError
from aiokafka.options import StartClose, reject_unknown
from aiokafka.protocol._gen import api_versions as _av
from aiokafka.protocol._gen import update_features as _uf
from aiokafka.structs import TopicPartition

__all__ = ["AIOKafkaAdminClient"]


class AIOKafkaAdminClient(
    TopicsMixin,
    ConfigsMixin,
    GroupsMixin,
    OffsetsMixin,
    AclsMixin,
    UsersMixin,
    ReplicasMixin,
    LogDirsMixin,
    TransactionsMixin,
    QuotasMixin,
    QuorumMixin,
    TokensMixin,
    ShareGroupsMixin,
    AdminSignature,
    StartClose,
):
    """Administer a Kafka cluster: topics, configs, groups, offsets, ACLs, users,
    quotas, replicas, transactions, delegation tokens and the metadata quorum.

    ``AIOKafkaAdminClient(bootstrap_servers="host:9092", request_timeout_ms=30000)``
    takes the shared client options (:class:`aiokafka.cluster.ClientConfig`: servers,
    ``client_id``, timeouts, back-offs, security/SASL). The constructor only
    validates (its signature is
    :class:`~aiokafka.admin._gen_options.AdminSignature`'s); :meth:`start` (or
    ``async with``) connects, :meth:`close` disconnects.

    Raises:
        ValueError: an unknown option or a value out of range (names the option).
        TypeError: a value of the wrong type.
    """

    def _take_options(self, options: dict[str, Any], unknown: Mapping[str, Any]) -> None:
        # The signature is AdminSignature's (generated with the other clients').
        reject_unknown("AIOKafkaAdminClient", unknown, ADMIN_OPTIONS | {"loop"})
        self._config: ClientConfig = admin_config(options)
        self._client = AIOKafkaClient(self._config)
        self._started = False
        self._closed = False

    @property
    def config(self) -> ClientConfig:
        """The validated configuration."""
        return self._config

    async def start(self) -> None:
        """Connect to the cluster and fetch its metadata.

        A second call while started does nothing, as in aiokafka.

        Raises:
            aiokafka.errors.KafkaConnectionError: no bootstrap server answered.
            aiokafka.errors.IllegalStateError: the client was closed (or a previous
                start() failed).
        """
        if self._closed:
            raise IllegalStateError("AIOKafkaAdminClient was closed; create a new one")
        if self._started:
            return
        self._started = True
        # Partition leaders of any topic are looked up from the client's metadata
        # (delete_records, list_offsets, ...): the admin client asks for every topic.
        self._client.topic_interest("admin").want_all()
        try:
            await self._client.start()
        except BaseException:
            # The cluster client closed itself; it cannot be started again.
            self._closed = True
            raise
        rack = self._config.client_rack
        self._client.push_metrics("admin", self.metrics, {"client_rack": rack} if rack else {})

    async def close(self) -> None:
        """Close every connection. Idempotent; operations still running fail with
        :class:`~aiokafka.errors.KafkaConnectionError`."""
        self._closed = True
        await self._client.close()

    def metrics(self) -> dict[str, Any]:
        """A snapshot of the admin client's request and connection metrics under the
        Java client's names, plus ``"nodes"`` per broker (``docs/metrics.md``)."""
        return self._client.network_metrics()

    async def describe_features(self) -> FeatureMetadata:
        """Supported and finalized feature flags (KIP-584), e.g. ``metadata.version``.

        Read from an ApiVersions (v3+) response of any broker.

        Brokers without ApiVersions v3 report no features (empty mappings).
        """
        response = await self._send_any(
            _av.ApiVersionsRequest(
                client_software_name="aiokafka-admin", client_software_version="1"
            )
        )
        return FeatureMetadata(
            {f.name: (f.min_version, f.max_version) for f in response.supported_features or ()},
            {
                f.name: (f.min_version_level, f.max_version_level)
                for f in response.finalized_features or ()
            },
            response.finalized_features_epoch,
        )

    async def update_features(
        self,
        updates: Mapping[str, FeatureUpdate],
        *,
        validate_only: bool = False,
        timeout_ms: int = 60000,
    ) -> None:
        """Change finalized feature levels (KIP-584), e.g. ``transaction.version``.

        The controller applies all of them or none.

        Args:
            updates: Feature name -> its new maximum level and how it may move.
            validate_only: Check the change without making it (UpdateFeatures v1+).
            timeout_ms: How long the controller may take.

        Raises:
            TypeError: a value that is not a :class:`~aiokafka.admin.FeatureUpdate`.
            aiokafka.errors.InvalidUpdateVersionError: a level the brokers do not
                support, or a downgrade without a downgrade type.
            aiokafka.errors.KafkaError: another error from the controller (its message
                names the feature).
        """
        check_count("timeout_ms", timeout_ms, 1)
        items = dict(updates)
        for name, update in items.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"updates: a feature name must be a non-empty str, got {name!r}")
            if not isinstance(update, FeatureUpdate):
                raise TypeError(f"updates[{name!r}] must be a FeatureUpdate")
        if not items:
            return
        request = _uf.UpdateFeaturesRequest(
            timeout_ms=timeout_ms,
            feature_updates=[
                _uf.FeatureUpdateKey(
                    feature=name,
                    max_version_level=u.max_version_level,
                    # v1+ (every KRaft broker); v0's allow_downgrade flag is not set,
                    # so such a broker refuses a downgrade rather than guess.
                    upgrade_type=int(u.upgrade_type),
                )
                for name, u in items.items()
            ],
            validate_only=bool(validate_only),
        )
        response = await self._send_any(request, timeout_ms)
        what = "update features " + ", ".join(sorted(items))
        check(response.error_code, response.error_message, what)
        for result in response.results or ():  # per feature before v2
            check(result.error_code, result.error_message, f"update feature {result.feature!r}")

    async def describe_consumer_group_offsets(
        self,
        group_id: str,
        partitions: Sequence[TopicPartition] | None = None,
        isolation_level: IsolationLevel = IsolationLevel.READ_UNCOMMITTED,
    ) -> dict[TopicPartition, GroupOffsetDescription]:
        """A group's committed offsets with each partition's end offset and lag.

        Combines :meth:`list_consumer_group_offsets` (coordinator) with
        :meth:`list_offsets` latest (partition leaders).

        Args:
            group_id: The group.
            partitions: Only these partitions; default those with a commit.
            isolation_level: ``READ_COMMITTED`` measures lag to the last stable
                offset, as a read-committed consumer sees it.

        Raises:
            aiokafka.errors.KafkaError: as the two calls above raise.
        """
        committed = await self.list_consumer_group_offsets(group_id, partitions=partitions)
        if not committed:
            return {}
        ends = await self.list_offsets(
            dict.fromkeys(committed, OffsetSpec.latest()), isolation_level
        )
        out: dict[TopicPartition, GroupOffsetDescription] = {}
        for tp, oam in committed.items():
            end = ends[tp].offset
            has_commit = oam.offset >= 0
            out[tp] = GroupOffsetDescription(
                oam.offset,
                oam.metadata,
                oam.leader_epoch,
                end,
                max(0, end - oam.offset) if has_commit else None,
            )
        return out

    async def reset_consumer_group_offsets(
        self,
        group_id: str,
        offsets: Mapping[TopicPartition, OffsetSpec | int],
    ) -> dict[TopicPartition, int]:
        """Move a group's committed offsets, as ``kafka-consumer-groups.sh
        --reset-offsets`` does (the group must have no active members).

        Each partition's target is an :class:`OffsetSpec` (earliest, latest, max
        timestamp, for a timestamp), looked up at the partition's leader, or an
        offset. Every target is clamped to the partition's earliest and latest
        offsets; a timestamp after the last record resolves to latest. The results
        are committed with :meth:`alter_consumer_group_offsets`.

        Returns:
            The offset committed per partition.

        Raises:
            TypeError, ValueError: a key that is not a ``TopicPartition``, a target
                that is neither an ``OffsetSpec`` nor an offset ``>= 0``.
            aiokafka.errors.UnknownMemberIdError: the group has active members.
            aiokafka.errors.KafkaError: as :meth:`list_offsets` and
                :meth:`alter_consumer_group_offsets` raise.
        """
        check_group_id(group_id)
        targets = dict(offsets)
        for tp, target in targets.items():
            if not isinstance(tp, TopicPartition):
                raise TypeError(f"offsets keys must be TopicPartition, got {tp!r}")
            if isinstance(target, bool) or not isinstance(target, (OffsetSpec, int)):
                raise TypeError(f"offsets[{tp}] must be an OffsetSpec or an int")
            if isinstance(target, int) and target < 0:
                raise ValueError(f"offsets[{tp}] must be >= 0, got {target}")
        if not targets:
            return {}
        ends = (OffsetSpec.EARLIEST, OffsetSpec.LATEST)
        lookups = {
            tp: t
            for tp, t in targets.items()
            if isinstance(t, OffsetSpec) and t.timestamp not in ends
        }
        # The look-ups are independent: one round trip, not three.
        earliest, latest, *at = await gather_all(
            self.list_offsets(dict.fromkeys(targets, OffsetSpec.earliest())),
            self.list_offsets(dict.fromkeys(targets, OffsetSpec.latest())),
            *([self.list_offsets(lookups)] if lookups else []),
        )
        found = at[0] if at else {}
        out: dict[TopicPartition, int] = {}
        for tp, target in targets.items():
            low, high = earliest[tp].offset, latest[tp].offset
            if isinstance(target, int):
                offset = target
            elif target.timestamp == OffsetSpec.EARLIEST:
                offset = low
            elif target.timestamp == OffsetSpec.LATEST:
                offset = high
            else:
                offset = found[tp].offset
                if offset < 0:  # no record at or after the timestamp
                    offset = high
            out[tp] = min(max(offset, low), high)
        await self.alter_consumer_group_offsets(group_id, dict(out))
        return out
