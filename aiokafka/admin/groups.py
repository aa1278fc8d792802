"""Consumer group operations, sent to each group's coordinator.

A group's coordinator is looked up with FindCoordinator (cached by the shared
client); NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS
make the retry loop forget the cached coordinator and try again.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from aiokafka.admin._base import AdminBase, check, error_for, instances, raise_first
from aiokafka.admin.results import (
    ConsumerGroupListing,
    GroupDescription,
    MemberDescription,
    group_as_responses,
)
from aiokafka.admin.topics import authorized_operations
from aiokafka.cluster import CoordinatorType
from aiokafka.errors import (
    KafkaError,
    KafkaProtocolError,
)
from aiokafka.protocol._gen import consumer_protocol_assignment as _cpa
from aiokafka.protocol._gen import delete_groups as _dg
from aiokafka.protocol._gen import describe_groups as _dsg
from aiokafka.protocol._gen import leave_group as _lvg
from aiokafka.protocol._gen import list_groups as _lg
from aiokafka.protocol._gen import offset_commit as _oc
from aiokafka.protocol._gen import offset_delete as _od
from aiokafka.protocol._gen import offset_fetch as _of
from aiokafka.protocol.group_offsets import (
    committed,
    offset_commit_topics,
    offset_fetch_request,
    offset_fetch_topics,
)
from aiokafka.protocol.topic_lists import per_topic
from aiokafka.structs import OffsetAndMetadata, TopicPartition

__all__ = ["GroupsMixin", "check_group_id", "decode_assignment"]

_GROUP = CoordinatorType.GROUP


def _group_ids(arg: str, values: object) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise TypeError(f"{arg} must be a list of group ids")
    out = list(dict.fromkeys(values))
    for g in out:
        if not isinstance(g, str) or not g:
            raise ValueError(f"{arg}: invalid group id {g!r}")
    return out


def check_group_id(value: object) -> str:
    """Return ``value`` if it is a non-empty str, else raise ``ValueError``."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"group_id must be a non-empty str, got {value!r}")
    return value


def decode_assignment(data: bytes) -> list[TopicPartition]:
    """Decode a ``consumer`` protocol assignment (version prefix + body).

    Returns an empty list for empty or undecodable bytes (a non-Java assignor may
    write its own format).
    """
    if len(data) < 2:
        return []
    (version,) = struct.unpack_from(">h", data)
    try:
        assignment = _cpa.ConsumerProtocolAssignment.decode(
            memoryview(data)[2:], min(version, _cpa.ConsumerProtocolAssignment.MAX_VERSION)
        )
    except KafkaProtocolError:
        return []
    return [
        TopicPartition(t.topic, p)
        for t in assignment.assigned_partitions
        for p in sorted(t.partitions)
    ]


class GroupsMixin(AdminBase):
    """Consumer group operations of :class:`~aiokafka.admin.AIOKafkaAdminClient`."""

    async def list_consumer_groups(
        self,
        broker_ids: Sequence[int] | None = None,
        states: Sequence[str] | None = None,
        types: Sequence[str] | None = None,
    ) -> list[ConsumerGroupListing]:
        """List groups known to the brokers (each coordinator knows its own).

        Args:
            broker_ids: Ask only these brokers; default all.
            states: Only groups in these states, e.g. ``["Stable", "Empty"]``
                (ListGroups v4+).
            types: Only groups of these types: ``"classic"``, ``"consumer"``
                (ListGroups v5+).

        Returns:
            Groups sorted by id; each is the pair ``(group_id, protocol_type)`` as in
            aiokafka, with ``.state`` and ``.group_type`` as attributes.

        Raises:
            aiokafka.errors.KafkaError: a broker failed to answer or reported an error.
        """
        nodes = list(self._client.cluster.brokers) if broker_ids is None else list(broker_ids)
        request = _lg.ListGroupsRequest(
            states_filter=list(states or ()), types_filter=list(types or ())
        )

        async def one(node: int) -> _lg.ListGroupsResponse:
            response = await self._send_node(node, request)
            check(response.error_code, None, f"list groups on broker {node}")
            return response

        responses = await asyncio.gather(*(one(n) for n in nodes))
        found: dict[str, ConsumerGroupListing] = {}
        for response in responses:
            for g in response.groups:
                found[g.group_id] = ConsumerGroupListing(
                    g.group_id, g.protocol_type, g.group_state or None, g.group_type or None
                )
        return [found[k] for k in sorted(found)]

    async def find_coordinator(self, group_id: str, coordinator_type: int = 0) -> int:
        """The node id of the coordinator of a group (``coordinator_type=0``) or of a
        transactional id (``1``), as in aiokafka. Retriable errors are retried.

        Raises:
            aiokafka.errors.GroupAuthorizationFailedError: and other FindCoordinator
                errors that are not retriable.
            ValueError: ``coordinator_type`` is neither 0 nor 1.
        """
        key = check_group_id(group_id)
        key_type = CoordinatorType(coordinator_type)

        async def attempt() -> int:
            return await self._client.coordinator_for(key, key_type)

        return await self._client.call_with_retry(attempt, self._deadline())

    async def describe_consumer_groups(
        self,
        group_ids: Sequence[str],
        group_coordinator_id: int | None = None,
        include_authorized_operations: bool = False,
        *,
        raise_errors: bool = False,
    ) -> list[GroupDescription]:
        """Describe groups: state, assignor and members with their assignments.

        Per item, as in aiokafka: a group the broker could not describe (e.g. not
        authorized) comes back with ``error`` set and a non-zero code in
        ``.groups``. A group that does not exist is described with state
        ``"Dead"``.

        Args:
            group_ids: Groups to describe.
            group_coordinator_id: Send to this broker instead of looking up each
                group's coordinator (aiokafka's argument).
            include_authorized_operations: Also report what the caller may do.
            raise_errors: Raise the first failed group's error class (its message
                names every failure) instead of returning it.

        Returns:
            One description per group, in order. aiokafka's shape: aiokafka
            returned one DescribeGroups response per coordinator; the first item
            of each coordinator's groups has ``.groups`` listing all of them (the
            others an empty list), so ``resp[0].groups[i]`` and loops over every
            item's ``.groups`` read as they did.

        Raises:
            aiokafka.errors.KafkaError: a per-group error with ``raise_errors``.
        """
        groups = _group_ids("group_ids", group_ids)
        # The node each group was last sent to: aiokafka's responses were per node.
        sent_to: dict[str, int] = {}

        async def send(node: int, names: list[str]) -> dict[str, Any]:
            sent_to.update(dict.fromkeys(names, node))
            request = _dsg.DescribeGroupsRequest(
                groups=names, include_authorized_operations=bool(include_authorized_operations)
            )
            response = await self._client.send(node, request)
            return {
                g.group_id: error_for(g.error_code, None, f"describe group {g.group_id!r}")
                or _describe_group(g, node)
                for g in response.groups
            }

        async def attempt(pending: list[str]) -> dict[str, Any]:
            return await self._per_coordinator(pending, _GROUP, send, group_coordinator_id)

        outcome = await self._retry_items(groups, attempt, deadline=self._deadline())
        if raise_errors:
            raise_first(outcome)
        described = [
            GroupDescription(g, "", "", "", [], coordinator=sent_to.get(g), error=v)
            if isinstance(v, KafkaError)
            else v
            for g, v in outcome.items()
        ]
        return group_as_responses(described, lambda d: d.coordinator)

    async def delete_consumer_groups(
        self, group_ids: Sequence[str], group_coordinator_id: int | None = None
    ) -> dict[str, KafkaError | None]:
        """Delete groups (and their committed offsets).

        Per item: returns each group's error or ``None``; e.g. ``NonEmptyGroup``
        for a group with active members, ``GroupIdNotFound`` for an unknown group.
        """
        groups = _group_ids("group_ids", group_ids)

        async def send(node: int, names: list[str]) -> dict[str, Any]:
            response = await self._client.send(node, _dg.DeleteGroupsRequest(groups_names=names))
            return {
                r.group_id: error_for(r.error_code, None, f"delete group {r.group_id!r}")
                for r in response.results
            }

        async def attempt(pending: list[str]) -> dict[str, Any]:
            return await self._per_coordinator(pending, _GROUP, send, group_coordinator_id)

        return await self._retry_items(groups, attempt, deadline=self._deadline())

    async def list_consumer_group_offsets(
        self,
        group_id: str,
        group_coordinator_id: int | None = None,
        partitions: Sequence[TopicPartition] | None = None,
        *,
        require_stable: bool = False,
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Committed offsets of a group.

        Args:
            group_id: The group.
            group_coordinator_id: Send to this broker instead of the looked-up
                coordinator (aiokafka's argument).
            partitions: Only these partitions (a partition without a commit maps to
                offset -1); default all partitions with a commit.
            require_stable: Fail with ``UnstableOffsetCommitError`` (retried) while
                a transactional commit is pending (KIP-447).

        Raises:
            aiokafka.errors.GroupAuthorizationFailedError: and other group errors.
            aiokafka.errors.UnknownTopicOrPartitionError: per-partition errors
                (the exception names every failed partition).
        """
        group = check_group_id(group_id)
        tps = None if partitions is None else instances("partitions", partitions, TopicPartition)

        async def attempt() -> dict[TopicPartition, Any]:
            if group_coordinator_id is None:
                node = await self._client.coordinator_for(group, _GROUP)
            else:
                node = group_coordinator_id
            version = await self._client.api_version(node, _of.OffsetFetchRequest.API_KEY)
            request = offset_fetch_request(group, tps, version, bool(require_stable))
            response = await self._client.send(node, request, max_version=version)
            out: dict[TopicPartition, Any] = {}
            for t in offset_fetch_topics(response, version, group):
                for p in t.partitions:
                    what = f"committed offset of {t.name}[{p.partition_index}]"
                    out[TopicPartition(t.name, p.partition_index)] = error_for(
                        p.error_code, None, what
                    ) or committed(p)
            return out

        outcome = await self._client.call_with_retry(
            attempt, self._deadline(), coordinator=(group, _GROUP)
        )
        raise_first(outcome)
        return outcome

    async def alter_consumer_group_offsets(
        self,
        group_id: str,
        offsets: Mapping[TopicPartition, OffsetAndMetadata | int],
    ) -> None:
        """Set a group's committed offsets (the group must have no active members).

        Args:
            group_id: The group.
            offsets: Partition -> offset, or :class:`OffsetAndMetadata` to also set
                the metadata string and leader epoch.

        Raises:
            aiokafka.errors.UnknownMemberIdError: the group has active members.
            aiokafka.errors.UnknownTopicOrPartitionError: and other per-partition
                errors; the other partitions are committed, the exception names every
                failure.
        """
        group = check_group_id(group_id)
        commits: dict[TopicPartition, OffsetAndMetadata] = {}
        for tp, value in offsets.items():
            if not isinstance(tp, TopicPartition):
                raise TypeError(f"offsets keys must be TopicPartition, got {tp!r}")
            oam = value if isinstance(value, OffsetAndMetadata) else OffsetAndMetadata(value, "")
            if not isinstance(oam.offset, int) or oam.offset < 0:
                raise ValueError(f"offsets[{tp}] must be a non-negative offset")
            commits[tp] = oam

        async def attempt(pending: list[TopicPartition]) -> dict[TopicPartition, Any]:
            node = await self._client.coordinator_for(group, _GROUP)
            request = _oc.OffsetCommitRequest(
                group_id=group, topics=offset_commit_topics({tp: commits[tp] for tp in pending})
            )
            response = await self._client.send(node, request)
            return self._partition_errors(
                response.topics, lambda tp: f"commit offset of {tp.topic}[{tp.partition}]"
            )

        outcome = await self._retry_items(
            commits, attempt, deadline=self._deadline(), coordinator=(group, _GROUP)
        )
        raise_first(outcome)

    async def delete_consumer_group_offsets(
        self, group_id: str, partitions: Sequence[TopicPartition]
    ) -> None:
        """Delete a group's committed offsets for some partitions (KIP-496).

        Raises:
            aiokafka.errors.GroupSubscribedToTopicError: the group is actively
                consuming the topic (per partition; the exception names all).
            aiokafka.errors.GroupIdNotFound: the group does not exist.
        """
        group = check_group_id(group_id)
        request = _od.OffsetDeleteRequest(
            group_id=group,
            topics=per_topic(
                instances("partitions", partitions, TopicPartition),
                _od.OffsetDeleteRequestTopic,
                lambda tp: _od.OffsetDeleteRequestPartition(partition_index=tp.partition),
            ),
        )

        def check_top(response: _od.OffsetDeleteResponse) -> None:
            check(response.error_code, None, f"delete offsets of group {group!r}")

        _, response = await self._send_coordinator(group, _GROUP, request, check_top)
        raise_first(
            self._partition_errors(
                response.topics, lambda tp: f"delete offset of {tp.topic}[{tp.partition}]"
            )
        )

    async def remove_members_from_consumer_group(
        self,
        group_id: str,
        group_instance_ids: Sequence[str] | None = None,
        *,
        reason: str | None = None,
    ) -> None:
        """Remove members from a classic-protocol group, as if they had left.

        A static member (KIP-345, ``group_instance_id``) sends no LeaveGroup when it
        stops, so the group waits its session timeout before it rebalances; this
        removes it now (a member still running rejoins as a new member).

        Args:
            group_id: The group.
            group_instance_ids: The static members to remove. ``None`` removes every
                member the group has now (static ones by instance id, the others by
                member id).
            reason: Why, for the broker's log (LeaveGroup v5+).

        Raises:
            aiokafka.errors.UnknownMemberIdError: no such member (per member; the
                exception names every member that failed, the others were removed).
            aiokafka.errors.KafkaError: the group or its coordinator failed.
        """
        group = check_group_id(group_id)
        if group_instance_ids is None:
            (described,) = await self.describe_consumer_groups([group], raise_errors=True)
            members = [
                _lvg.MemberIdentity(group_instance_id=m.group_instance_id, reason=reason)
                if m.group_instance_id
                else _lvg.MemberIdentity(member_id=m.member_id, reason=reason)
                for m in described.members
            ]
        else:
            if isinstance(group_instance_ids, str):
                raise TypeError("group_instance_ids must be a list of str")
            ids = instances("group_instance_ids", group_instance_ids, str)
            if not all(ids):
                raise ValueError("group_instance_ids: an instance id must not be empty")
            members = [_lvg.MemberIdentity(group_instance_id=i, reason=reason) for i in ids]
        if not members:
            return
        request = _lvg.LeaveGroupRequest(group_id=group, members=members)

        def check_top(response: _lvg.LeaveGroupResponse) -> None:
            check(response.error_code, None, f"remove members from group {group!r}")

        _, response = await self._send_coordinator(group, _GROUP, request, check_top)
        raise_first(
            {
                m.group_instance_id or m.member_id: error_for(
                    m.error_code,
                    None,
                    f"remove member {m.group_instance_id or m.member_id!r} of group {group!r}",
                )
                for m in response.members
            }
        )


def _describe_group(g: Any, node: int) -> GroupDescription:
    consumer = g.protocol_type == "consumer"
    members = [
        MemberDescription(
            m.member_id,
            m.group_instance_id,
            m.client_id,
            m.client_host,
            decode_assignment(m.member_assignment) if consumer else [],
            bytes(m.member_metadata),
            bytes(m.member_assignment),
        )
        for m in g.members
    ]
    return GroupDescription(
        g.group_id,
        g.group_state,
        g.protocol_type,
        g.protocol_data,
        members,
        node,
        authorized_operations(g.authorized_operations),
    )
