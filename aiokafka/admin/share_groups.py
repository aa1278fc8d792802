"""Share-group (KIP-932) operations of the admin client.

Listing uses ListGroups with the ``share`` type filter; deleting a share group is a
DeleteGroups like any group's. Describing a group and its offsets, and altering or
deleting offsets, use the share-group APIs (ShareGroupDescribe and
Describe/Alter/DeleteShareGroupOffsets, generated from the project's definitions in
``tools/codegen/definitions/``). Group configs (``share.auto.offset.reset``,
``share.record.lock.duration.ms``, ``share.delivery.count.limit``, ...) are set with
:meth:`~aiokafka.admin.AIOKafkaAdminClient.incremental_alter_configs` on a
``ConfigResource(ConfigResourceType.GROUP, group_id)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from aiokafka.admin._base import AdminBase, check, error_for
from aiokafka.cluster import CoordinatorType
from aiokafka.errors import KafkaError
from aiokafka.protocol import messages as _messages
from aiokafka.structs import TopicPartition

__all__ = [
    "ShareGroupDescription",
    "ShareGroupListing",
    "ShareGroupOffset",
    "ShareGroupsMixin",
    "ShareMemberDescription",
]

_GROUP = CoordinatorType.GROUP


@dataclass(frozen=True, slots=True)
class ShareGroupListing:
    """A share group as listed: its id and state (``Empty``, ``Stable``, ...)."""

    group_id: str
    state: str | None


@dataclass(frozen=True, slots=True)
class ShareMemberDescription:
    """One member of a share group."""

    member_id: str
    client_id: str
    client_host: str
    rack_id: str | None
    member_epoch: int
    subscribed_topics: tuple[str, ...]
    assignment: frozenset[TopicPartition]


@dataclass(frozen=True, slots=True)
class ShareGroupDescription:
    """A described share group; ``error`` is set (and the rest empty) if it failed."""

    group_id: str
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor: str
    members: tuple[ShareMemberDescription, ...] = field(default_factory=tuple)
    error: KafkaError | None = None


@dataclass(frozen=True, slots=True)
class ShareGroupOffset:
    """Where a share group starts in a partition (its share-partition start offset),
    and how many records after it are not yet acknowledged (``lag``).

    The values are the broker's persisted share-group state, as Kafka's own
    ``Admin.listShareGroupOffsets`` reports them (checked against Kafka 4.3):

    * ``start_offset`` and ``lag`` are -1 until the broker has written state for the
      partition, i.e. until records of it were first acknowledged (Kafka's admin
      client shows no offset for it then). ``lag`` is also -1 from a broker that
      only speaks DescribeShareGroupOffsets v0.
    * ``start_offset`` trails the acknowledgements by one round: after a member
      accepts offsets 10-14 it is still 10, and it moves to 15 with the next
      acknowledgement written. ``lag`` is exact: with every delivered record
      accepted and nothing new it is 0, even while ``start_offset`` still points at
      accepted records.
    """

    start_offset: int
    leader_epoch: int
    lag: int


class ShareGroupsMixin(AdminBase):
    """Share-group operations of :class:`~aiokafka.admin.AIOKafkaAdminClient`."""

    async def list_share_groups(self) -> list[ShareGroupListing]:
        """Every share group the brokers know, sorted by id.

        Raises:
            aiokafka.errors.KafkaError: a broker failed to answer or reported an error.
        """
        request = _messages.ListGroupsRequest(types_filter=["share"])

        async def one(node: int) -> _messages.ListGroupsResponse:
            response = await self._send_node(node, request)
            check(response.error_code, None, f"list groups on broker {node}")
            return response

        nodes = list(self._client.cluster.brokers)
        found: dict[str, ShareGroupListing] = {}
        for response in await asyncio.gather(*(one(n) for n in nodes)):
            for g in response.groups:
                found[g.group_id] = ShareGroupListing(g.group_id, g.group_state or None)
        return [found[k] for k in sorted(found)]

    async def describe_share_groups(self, group_ids: Sequence[str]) -> list[ShareGroupDescription]:
        """Describe share groups (per item: a failed group carries its ``error``).

        Raises:
            aiokafka.errors.KafkaError: a request failed as a whole.
        """
        return list(await asyncio.gather(*(self._describe_one(g) for g in _ids(group_ids))))

    async def _describe_one(self, group_id: str) -> ShareGroupDescription:
        body = _messages.ShareGroupDescribeRequest(group_ids=[group_id])

        def check_top(response: _messages.ShareGroupDescribeResponse) -> None:
            for g in response.groups:
                # NOT_COORDINATOR & co. arrive per group: raise them to be retried.
                err = error_for(g.error_code, g.error_message, f"describe {g.group_id!r}")
                if err is not None and err.retriable:
                    raise err

        _, response = await self._send_coordinator(group_id, _GROUP, body, check_top)
        (g,) = response.groups
        err = error_for(g.error_code, g.error_message, f"describe share group {group_id!r}")
        members = tuple(
            ShareMemberDescription(
                m.member_id,
                m.client_id,
                m.client_host,
                m.rack_id,
                m.member_epoch,
                tuple(m.subscribed_topic_names),
                frozenset(
                    TopicPartition(t.topic_name, p)
                    for t in m.assignment.topic_partitions
                    for p in t.partitions
                ),
            )
            for m in g.members
        )
        return ShareGroupDescription(
            group_id,
            g.group_state,
            g.group_epoch,
            g.assignment_epoch,
            g.assignor_name,
            members,
            err,
        )

    async def delete_share_groups(self, group_ids: Sequence[str]) -> dict[str, KafkaError | None]:
        """Delete share groups and their state. Per item: each group's error or
        ``None`` (``GroupNotEmptyError`` while members are active)."""

        async def one(group_id: str) -> KafkaError | None:
            request = _messages.DeleteGroupsRequest(groups_names=[group_id])
            _, response = await self._send_coordinator(group_id, _GROUP, request)
            (r,) = response.results
            return error_for(r.error_code, None, f"delete share group {group_id!r}")

        ids = _ids(group_ids)
        return dict(zip(ids, await asyncio.gather(*(one(g) for g in ids)), strict=True))

    async def describe_share_group_offsets(
        self, group_id: str, partitions: Sequence[TopicPartition] | None = None
    ) -> dict[TopicPartition, ShareGroupOffset]:
        """The share group's start offset (and lag) in each partition it has state
        for, or in ``partitions`` (see :class:`ShareGroupOffset` for what the broker
        reports while the group is active).

        Raises:
            aiokafka.errors.KafkaError: the group's or a partition's error.
        """
        topics: list[_messages.DescribeShareGroupOffsetsRequestTopic] | None = None
        if partitions is not None:
            by_topic: dict[str, list[int]] = {}
            for tp in partitions:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            topics = [
                _messages.DescribeShareGroupOffsetsRequestTopic(topic_name=t, partitions=ps)
                for t, ps in by_topic.items()
            ]
        group = _messages.DescribeShareGroupOffsetsRequestGroup(group_id=group_id, topics=topics)
        request = _messages.DescribeShareGroupOffsetsRequest(groups=[group])

        def check_group(response: _messages.DescribeShareGroupOffsetsResponse) -> None:
            for g in response.groups:
                check(g.error_code, g.error_message, group_id)

        _, resp = await self._send_coordinator(group_id, _GROUP, request, check_group)
        out: dict[TopicPartition, ShareGroupOffset] = {}
        for g in resp.groups:
            for t in g.topics:
                for p in t.partitions:
                    tp = TopicPartition(t.topic_name, p.partition_index)
                    check(p.error_code, p.error_message, f"share group {group_id!r} offset of {tp}")
                    # A v0 answer has no lag: the generated default, -1, says unknown.
                    out[tp] = ShareGroupOffset(p.start_offset, p.leader_epoch, p.lag)
        return out

    async def alter_share_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int]
    ) -> None:
        """Move the share group's start offset in partitions (the group must have no
        active members).

        Raises:
            aiokafka.errors.KafkaError: the group's or the first partition's error.
        """
        by_topic: dict[str, list[_messages.AlterShareGroupOffsetsRequestPartition]] = {}
        for tp, offset in offsets.items():
            by_topic.setdefault(tp.topic, []).append(
                _messages.AlterShareGroupOffsetsRequestPartition(
                    partition_index=tp.partition, start_offset=int(offset)
                )
            )
        request = _messages.AlterShareGroupOffsetsRequest(
            group_id=group_id,
            topics=[
                _messages.AlterShareGroupOffsetsRequestTopic(topic_name=t, partitions=ps)
                for t, ps in by_topic.items()
            ],
        )
        _, resp = await self._send_coordinator(
            group_id,
            _GROUP,
            request,
            lambda r: check(r.error_code, r.error_message, f"alter share group {group_id!r}"),
        )
        for t in resp.responses:
            for p in t.partitions:
                check(p.error_code, p.error_message, f"{t.topic_name}-{p.partition_index}")

    async def delete_share_group_offsets(self, group_id: str, topics: Sequence[str]) -> None:
        """Forget the share group's state for whole topics (the group must have no
        active members); it starts again by ``share.auto.offset.reset``.

        Raises:
            aiokafka.errors.KafkaError: the group's or the first topic's error.
        """
        request = _messages.DeleteShareGroupOffsetsRequest(
            group_id=group_id,
            topics=[_messages.DeleteShareGroupOffsetsRequestTopic(topic_name=t) for t in topics],
        )
        _, resp = await self._send_coordinator(
            group_id,
            _GROUP,
            request,
            lambda r: check(
                r.error_code, r.error_message, f"delete share group offsets {group_id!r}"
            ),
        )
        for t in resp.responses:
            check(t.error_code, t.error_message, t.topic_name)


def _ids(values: Sequence[str]) -> list[str]:
    if isinstance(values, str):
        raise TypeError("group_ids must be a list of group ids")
    out = list(dict.fromkeys(values))
    for g in out:
        if not isinstance(g, str) or not g:
            raise ValueError(f"group_ids: invalid group id {g!r}")
    return out
