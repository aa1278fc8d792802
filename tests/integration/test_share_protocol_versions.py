"""Every share-group API version the rig's broker advertises, spoken by the generated
classes (``tools/codegen/definitions/``) over a plain connection.

Each request goes out at one version; the broker's response body must decode and
encode back to the very bytes the broker sent, and each request must decode back to
itself. The test walks a share group's life so every answer carries data: join,
fetch, acknowledge, describe, describe offsets, leave, alter and delete offsets.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Callable
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.types import AlterConfigOp, ConfigResource, ConfigResourceType
from aiokafka.protocol import messages as m
from aiokafka.protocol.api import encode_request, read_correlation_id, response_header_version
from aiokafka.share.acks import ACCEPT
from aiokafka.share.membership import new_member_id
from tests.support.kafka_frames import framed, read_frame

if sys.version_info >= (3, 11):
    from asyncio import timeout
else:  # Python 3.10
    from async_timeout import timeout

SHARE_APIS = (76, 77, 78, 79, 90, 91, 92)
RECORD_LIMIT = 1  # ShareAcquireMode (v2): MaxRecords is a strict limit
# COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
_COORDINATOR_NOT_READY = (14, 15, 16)


class RawBroker:
    """One connection to a broker: requests at a chosen version, no client logic."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._correlation = 0
        #: (API key, version) of every exchange.
        self.spoken: set[tuple[int, int]] = set()

    @classmethod
    async def connect(cls, bootstrap: str) -> RawBroker:
        host, _, port = bootstrap.rpartition(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        return cls(reader, writer)

    async def close(self) -> None:
        self._writer.close()
        await self._writer.wait_closed()

    async def call(self, request: Any, version: int) -> Any:
        """Send ``request`` at ``version``; return the decoded response after checking
        that both messages survive a round trip byte for byte."""
        key: int = request.API_KEY
        assert type(request).decode(request.encode(version), version) == request
        self._correlation += 1
        self._writer.write(framed(encode_request(request, version, self._correlation, "v")))
        await self._writer.drain()
        frame = await read_frame(self._reader)
        assert frame is not None, f"broker closed the connection on API {key} v{version}"
        assert read_correlation_id(frame) == self._correlation
        start = 4
        if response_header_version(key, version) == 1:
            assert frame[4] == 0  # no header tagged fields
            start = 5
        body = frame[start:]
        response = request.RESPONSE_TYPE.decode(body, version)
        assert response.encode(version) == body, f"API {key} v{version} does not round-trip"
        self.spoken.add((key, version))
        return response


def _acquired_offsets(resp: Any) -> list[int]:
    assert resp.error_code == 0, resp
    out = []
    for topic in resp.responses:
        for part in topic.partitions:
            assert part.error_code == 0 and part.acknowledge_error_code == 0, part
            for span in part.acquired_records:
                out.extend(range(span.first_offset, span.last_offset + 1))
    return out


async def _produce(bootstrap: str, topic: str, n: int) -> None:
    async with AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=50) as producer:
        futures = [await producer.send(topic, b"v%d" % i) for i in range(n)]
        await producer.flush()
        for f in futures:
            await f


async def test_every_advertised_share_api_version_round_trips(
    kafka: Any, admin: AIOKafkaAdminClient, new_topic: Callable[..., str]
) -> None:
    topic = new_topic()
    group = f"share-versions-{uuid.uuid4().hex[:8]}"
    bootstrap = kafka.bootstrap("PLAINTEXT")
    await admin.incremental_alter_configs(
        {
            ConfigResource(ConfigResourceType.GROUP, group): [
                AlterConfigOp("share.auto.offset.reset", "earliest")
            ]
        }
    )
    broker = await RawBroker.connect(bootstrap)
    try:
        async with timeout(120):
            await _walk(broker, bootstrap, topic, group)
    finally:
        await broker.close()


async def _walk(broker: RawBroker, bootstrap: str, topic: str, group: str) -> None:
    api = await broker.call(
        m.ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3
    )
    advertised = {k.api_key: range(k.min_version, k.max_version + 1) for k in api.api_keys}
    for key in SHARE_APIS:
        ours = range(m.REQUEST_TYPES[key].MIN_VERSION, m.REQUEST_TYPES[key].MAX_VERSION + 1)
        assert key in advertised and set(advertised[key]) <= set(ours), (key, advertised.get(key))
        response_type = m.REQUEST_TYPES[key].RESPONSE_TYPE
        assert (response_type.MIN_VERSION, response_type.MAX_VERSION) == (ours[0], ours[-1])

    # Asking for the coordinator makes the broker load the group's partition.
    find = m.FindCoordinatorRequest(key_type=0, coordinator_keys=[group])
    for _ in range(60):
        (found,) = (await broker.call(find, 4)).coordinators
        if found.error_code == 0:
            break
        await asyncio.sleep(0.5)
    assert found.error_code == 0, found

    # Join and wait for the assignment (every heartbeat version in turn).
    member = new_member_id()
    epoch, topic_id, n = 0, None, 0
    while topic_id is None:
        version = advertised[76][n % len(advertised[76])]
        n += 1
        hb = await broker.call(
            m.ShareGroupHeartbeatRequest(
                group_id=group,
                member_id=member,
                member_epoch=epoch,
                subscribed_topic_names=[topic] if epoch == 0 else None,
            ),
            version,
        )
        if hb.error_code in _COORDINATOR_NOT_READY and epoch == 0:
            await asyncio.sleep(0.5)  # the group's coordinator is still loading
            continue
        assert hb.error_code == 0, hb
        epoch = hb.member_epoch
        if hb.assignment is not None and hb.assignment.topic_partitions:
            (tps,) = hb.assignment.topic_partitions
            assert tps.partitions == [0]
            topic_id = tps.topic_id
        else:
            await asyncio.sleep(0.5)

    # Fetch and acknowledge: each round at the next ShareFetch / ShareAcknowledge version.
    fetch_versions, ack_versions = advertised[78], advertised[79]
    session_epoch = 0
    left = 0  # produced records not acquired (record-limit fetches leave some)
    for i in range(max(len(fetch_versions), len(ack_versions))):
        fetch_v = fetch_versions[min(i, len(fetch_versions) - 1)]
        ack_v = ack_versions[min(i, len(ack_versions) - 1)]
        await _produce(bootstrap, topic, 3)
        left += 3
        record_limit = fetch_v >= 2
        request = m.ShareFetchRequest(
            group_id=group,
            member_id=member,
            share_session_epoch=session_epoch,
            max_wait_ms=5000,
            min_bytes=1,
            max_records=1 if record_limit else 500,
            batch_size=1 if record_limit else 500,
            share_acquire_mode=RECORD_LIMIT if record_limit else 0,
            topics=[
                m.ShareFetchRequestFetchTopic(
                    topic_id=topic_id,
                    partitions=[m.ShareFetchRequestFetchPartition(partition_index=0)],
                )
            ]
            if session_epoch == 0
            else [],
        )
        acquired = _acquired_offsets(await broker.call(request, fetch_v))
        session_epoch += 1
        while not acquired:  # the records may not be visible to the first fetch
            request.share_session_epoch = session_epoch
            request.topics = []
            acquired = _acquired_offsets(await broker.call(request, fetch_v))
            session_epoch += 1
        if record_limit:
            assert len(acquired) == 1, acquired  # ShareFetch v2's strict MaxRecords
        left -= len(acquired)
        ack = await broker.call(
            m.ShareAcknowledgeRequest(
                group_id=group,
                member_id=member,
                share_session_epoch=session_epoch,
                topics=[
                    m.AcknowledgeTopic(
                        topic_id=topic_id,
                        partitions=[
                            m.AcknowledgePartition(
                                partition_index=0,
                                acknowledgement_batches=[
                                    m.ShareAcknowledgeRequestAcknowledgementBatch(
                                        first_offset=acquired[0],
                                        last_offset=acquired[-1],
                                        acknowledge_types=[ACCEPT],
                                    )
                                ],
                            )
                        ],
                    )
                ],
            ),
            ack_v,
        )
        session_epoch += 1
        assert ack.error_code == 0
        assert [p.error_code for t in ack.responses for p in t.partitions] == [0]

    closing = m.ShareAcknowledgeRequest(group_id=group, member_id=member, share_session_epoch=-1)
    assert (await broker.call(closing, ack_versions[-1])).error_code == 0

    for version in advertised[77]:
        described = await broker.call(m.ShareGroupDescribeRequest(group_ids=[group]), version)
        (g,) = described.groups
        assert g.error_code == 0 and [mb.member_id for mb in g.members] == [member]
        (assigned,) = g.members[0].assignment.topic_partitions
        assert (assigned.topic_name, assigned.partitions) == (topic, [0])

    describe_offsets = m.DescribeShareGroupOffsetsRequest(
        groups=[m.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=None)]
    )
    for version in advertised[90]:
        resp = await broker.call(describe_offsets, version)
        (g,) = resp.groups
        (t,) = g.topics
        (p,) = t.partitions
        assert (g.error_code, t.topic_name, t.topic_id, p.error_code) == (0, topic, topic_id, 0)
        assert p.start_offset >= 0
        # v0 has no lag (decoded as -1); from v1 on: the records never acquired.
        assert p.lag == (left if version >= 1 else -1), (version, p)

    leave = m.ShareGroupHeartbeatRequest(group_id=group, member_id=member, member_epoch=-1)
    assert (await broker.call(leave, advertised[76][-1])).error_code == 0

    for version in advertised[91]:
        altered = await broker.call(
            m.AlterShareGroupOffsetsRequest(
                group_id=group,
                topics=[
                    m.AlterShareGroupOffsetsRequestTopic(
                        topic_name=topic,
                        partitions=[
                            m.AlterShareGroupOffsetsRequestPartition(
                                partition_index=0, start_offset=version
                            )
                        ],
                    )
                ],
            ),
            version,
        )
        assert altered.error_code == 0
        assert [(r.topic_name, p.error_code) for r in altered.responses for p in r.partitions] == [
            (topic, 0)
        ]
        resp = await broker.call(describe_offsets, advertised[90][-1])
        assert resp.groups[0].topics[0].partitions[0].start_offset == version

    for version in advertised[92]:
        deleted = await broker.call(
            m.DeleteShareGroupOffsetsRequest(
                group_id=group, topics=[m.DeleteShareGroupOffsetsRequestTopic(topic_name=topic)]
            ),
            version,
        )
        assert deleted.error_code == 0
        assert [(r.topic_name, r.topic_id, r.error_code) for r in deleted.responses] == [
            (topic, topic_id, 0)
        ]
        resp = await broker.call(describe_offsets, advertised[90][-1])
        assert resp.groups[0].topics == []

    # Every version the broker advertises for every share API was spoken.
    wanted = {(key, v) for key in SHARE_APIS for v in advertised[key]}
    assert wanted <= broker.spoken, sorted(wanted - broker.spoken)
