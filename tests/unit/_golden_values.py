"""Representative values of the hot APIs for the golden-bytes cross-check.

Each value is the superset of every field of the message over all versions; the test
drops the fields a version lacks (``_golden_spec.for_version``). Values are chosen so
that every field differs from its default (tagged fields included, so they are really
written) and nullable fields appear both as None and as a value where the spec allows.

``versions`` lists the versions checked against kafka-python 3.0.12. Its definitions
are newer than the Kafka 4.0 snapshot we generate from: they drop the oldest versions of
some APIs (noted per API below; those versions are covered only by our own round trips)
and add newer ones. Only versions both sides define are listed, always at least one
non-flexible and one flexible version.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

TOPIC_ID = uuid.UUID("8a3c2b1e-55d4-4f6a-9b7e-0c1d2e3f4a5b")
DIR_ID = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
# Opaque to the protocol layer: the records field is carried as bytes.
RECORDS = bytes(range(70))


@dataclass
class Case:
    """One message value to cross-check at several versions."""

    message: str  # JSON/class name, e.g. "ProduceRequest"
    label: str
    versions: tuple[int, ...]
    value: dict[str, Any]


def _node(node_id: int, rack: str | None) -> dict[str, Any]:
    return {"node_id": node_id, "host": f"broker-{node_id}.example", "port": 9092, "rack": rack}


CASES: list[Case] = [
    # -- Produce (key 0). kafka-python defines v3-13; Kafka 4.0 defines v0-11.
    Case(
        "ProduceRequest",
        "two-topics",
        (3, 7, 8, 9, 11),
        {
            "transactional_id": "txn-1",
            "acks": -1,
            "timeout_ms": 30000,
            "topic_data": [
                {
                    "name": "orders",
                    "partition_data": [
                        {"index": 0, "records": RECORDS},
                        {"index": 5, "records": RECORDS[:9]},
                    ],
                },
                {"name": "ünïcode-topic", "partition_data": [{"index": 2, "records": None}]},
            ],
        },
    ),
    Case(
        "ProduceRequest",
        "no-txn-acks0",
        (3, 9),
        {"transactional_id": None, "acks": 0, "timeout_ms": 1, "topic_data": []},
    ),
    Case(
        "ProduceResponse",
        "errors-and-leader",
        (3, 5, 8, 9, 10, 11),
        {
            "responses": [
                {
                    "name": "orders",
                    "partition_responses": [
                        {
                            "index": 0,
                            "error_code": 0,
                            "base_offset": 1234567890123,
                            "log_append_time_ms": 1700000000000,
                            "log_start_offset": 17,
                            "record_errors": [
                                {"batch_index": 3, "batch_index_error_message": "bad"},
                                {"batch_index": 4, "batch_index_error_message": None},
                            ],
                            "error_message": "partial",
                            "current_leader": {"leader_id": 2, "leader_epoch": 9},
                        },
                        {
                            "index": 1,
                            "error_code": 6,
                            "base_offset": -1,
                            "log_append_time_ms": -1,
                            "log_start_offset": -1,
                            "record_errors": [],
                            "error_message": None,
                        },
                    ],
                }
            ],
            "throttle_time_ms": 250,
            "node_endpoints": [_node(2, "rack-a"), _node(3, None)],
        },
    ),
    # -- Fetch (key 1). kafka-python defines v4-18; Kafka 4.0 defines v0-17.
    Case(
        "FetchRequest",
        "consumer-fetch",
        (4, 7, 9, 11, 12, 13, 15, 17),
        {
            "cluster_id": "cluster-xyz",
            "replica_id": -1,
            "replica_state": {"replica_id": 4, "replica_epoch": 77},
            "max_wait_ms": 500,
            "min_bytes": 1,
            "max_bytes": 52428800,
            "isolation_level": 1,
            "session_id": 123,
            "session_epoch": 4,
            "topics": [
                {
                    "topic": "orders",
                    "topic_id": TOPIC_ID,
                    "partitions": [
                        {
                            "partition": 0,
                            "current_leader_epoch": 5,
                            "fetch_offset": 1000,
                            "last_fetched_epoch": 4,
                            "log_start_offset": 10,
                            "partition_max_bytes": 1048576,
                            "replica_directory_id": DIR_ID,
                        },
                        {
                            "partition": 3,
                            "current_leader_epoch": -1,
                            "fetch_offset": 0,
                            "last_fetched_epoch": -1,
                            "log_start_offset": -1,
                            "partition_max_bytes": 65536,
                        },
                    ],
                }
            ],
            "forgotten_topics_data": [
                {"topic": "old-topic", "topic_id": TOPIC_ID, "partitions": [1, 2, 7]}
            ],
            "rack_id": "rack-b",
        },
    ),
    Case(
        "FetchResponse",
        "records-and-tags",
        (4, 5, 7, 11, 12, 13, 16, 17),
        {
            "throttle_time_ms": 3,
            "error_code": 0,
            "session_id": 99,
            "responses": [
                {
                    "topic": "orders",
                    "topic_id": TOPIC_ID,
                    "partitions": [
                        {
                            "partition_index": 0,
                            "error_code": 0,
                            "high_watermark": 5000,
                            "last_stable_offset": 4990,
                            "log_start_offset": 100,
                            "diverging_epoch": {"epoch": 3, "end_offset": 4000},
                            "current_leader": {"leader_id": 1, "leader_epoch": 6},
                            "snapshot_id": {"end_offset": 77, "epoch": 2},
                            "aborted_transactions": [
                                {"producer_id": 42, "first_offset": 4500},
                            ],
                            "preferred_read_replica": 2,
                            "records": RECORDS,
                        },
                        {
                            "partition_index": 1,
                            "error_code": 1,
                            "high_watermark": -1,
                            "last_stable_offset": -1,
                            "log_start_offset": -1,
                            "aborted_transactions": None,
                            "preferred_read_replica": -1,
                            "records": None,
                        },
                    ],
                }
            ],
            "node_endpoints": [_node(1, "rack-c")],
        },
    ),
    # -- ListOffsets (key 2). kafka-python has no v0 (v1-11); Kafka 4.0 has v0-10.
    Case(
        "ListOffsetsRequest",
        "latest-and-ts",
        (1, 2, 4, 5, 6, 8, 10),
        {
            "replica_id": -1,
            "isolation_level": 1,
            "topics": [
                {
                    "name": "orders",
                    "partitions": [
                        {
                            "partition_index": 0,
                            "current_leader_epoch": 3,
                            "timestamp": -1,
                            "max_num_offsets": 3,
                        },
                        {
                            "partition_index": 1,
                            "current_leader_epoch": -1,
                            "timestamp": 1700000000000,
                            "max_num_offsets": 1,
                        },
                    ],
                }
            ],
            "timeout_ms": 15000,
        },
    ),
    Case(
        "ListOffsetsResponse",
        "offsets",
        (1, 2, 4, 5, 6, 10),
        {
            "throttle_time_ms": 7,
            "topics": [
                {
                    "name": "orders",
                    "partitions": [
                        {
                            "partition_index": 0,
                            "error_code": 0,
                            "old_style_offsets": [12345, 12000, 0],
                            "timestamp": 1700000000001,
                            "offset": 12345,
                            "leader_epoch": 3,
                        },
                        {
                            "partition_index": 1,
                            "error_code": 3,
                            "old_style_offsets": [],
                            "timestamp": -1,
                            "offset": -1,
                            "leader_epoch": -1,
                        },
                    ],
                }
            ],
        },
    ),
    # -- Metadata (key 3). Both sides define v0-12 (kafka-python up to 13).
    Case(
        "MetadataRequest",
        "two-topics",
        (0, 1, 4, 8, 9, 10, 12),
        {
            "topics": [
                {"topic_id": TOPIC_ID, "name": "orders"},
                {"topic_id": uuid.UUID(int=0), "name": "payments"},
            ],
            "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": True,
            "include_topic_authorized_operations": True,
        },
    ),
    Case(
        "MetadataRequest",
        "all-topics",
        (1, 9, 12),
        {
            "topics": None,
            "allow_auto_topic_creation": True,
            "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False,
        },
    ),
    Case(
        "MetadataResponse",
        "cluster",
        (0, 1, 2, 3, 5, 7, 8, 9, 10, 12),
        {
            "throttle_time_ms": 11,
            "brokers": [_node(1, "rack-a"), _node(2, None)],
            "cluster_id": "clu-ster-id",
            "controller_id": 2,
            "topics": [
                {
                    "error_code": 0,
                    "name": "orders",
                    "topic_id": TOPIC_ID,
                    "is_internal": True,
                    "partitions": [
                        {
                            "error_code": 0,
                            "partition_index": 0,
                            "leader_id": 1,
                            "leader_epoch": 8,
                            "replica_nodes": [1, 2, 3],
                            "isr_nodes": [1, 2],
                            "offline_replicas": [3],
                        },
                        {
                            "error_code": 9,
                            "partition_index": 1,
                            "leader_id": -1,
                            "leader_epoch": -1,
                            "replica_nodes": [],
                            "isr_nodes": [],
                            "offline_replicas": [],
                        },
                    ],
                    "topic_authorized_operations": 0x0DF8,
                }
            ],
            "cluster_authorized_operations": -2147483648,
        },
    ),
    # -- OffsetCommit (key 8). kafka-python has no v0-1 (v2-10).
    Case(
        "OffsetCommitRequest",
        "commit",
        (2, 4, 5, 6, 7, 8, 9),
        {
            "group_id": "group-1",
            "generation_id_or_member_epoch": 12,
            "member_id": "member-abc",
            "group_instance_id": "static-1",
            "retention_time_ms": 86400000,
            "topics": [
                {
                    "name": "orders",
                    "partitions": [
                        {
                            "partition_index": 0,
                            "committed_offset": 100,
                            "committed_leader_epoch": 4,
                            "commit_timestamp": 1700000000000,
                            "committed_metadata": "meta",
                        },
                        {
                            "partition_index": 1,
                            "committed_offset": 0,
                            "committed_leader_epoch": -1,
                            "commit_timestamp": -1,
                            "committed_metadata": None,
                        },
                    ],
                }
            ],
        },
    ),
    Case(
        "OffsetCommitResponse",
        "per-partition",
        (2, 3, 8, 9),
        {
            "throttle_time_ms": 5,
            "topics": [
                {
                    "name": "orders",
                    "partitions": [
                        {"partition_index": 0, "error_code": 0},
                        {"partition_index": 1, "error_code": 22},
                    ],
                }
            ],
        },
    ),
    # -- OffsetFetch (key 9). kafka-python has no v0 (v1-10).
    Case(
        "OffsetFetchRequest",
        "single-and-multi-group",
        (1, 2, 5, 6, 7, 8, 9),
        {
            "group_id": "group-1",
            "topics": [{"name": "orders", "partition_indexes": [0, 1, 2]}],
            "groups": [
                {
                    "group_id": "group-1",
                    "member_id": "member-1",
                    "member_epoch": 3,
                    "topics": [{"name": "orders", "partition_indexes": [0, 4]}],
                },
                {"group_id": "group-2", "member_id": None, "member_epoch": -1, "topics": None},
            ],
            "require_stable": True,
        },
    ),
    Case(
        "OffsetFetchResponse",
        "offsets",
        (1, 2, 3, 5, 6, 7, 8, 9),
        {
            "throttle_time_ms": 9,
            "topics": [
                {
                    "name": "orders",
                    "partitions": [
                        {
                            "partition_index": 0,
                            "committed_offset": 100,
                            "committed_leader_epoch": 4,
                            "metadata": "m",
                            "error_code": 0,
                        },
                        {
                            "partition_index": 1,
                            "committed_offset": -1,
                            "committed_leader_epoch": -1,
                            "metadata": None,
                            "error_code": 0,
                        },
                    ],
                }
            ],
            "error_code": 0,
            "groups": [
                {
                    "group_id": "group-1",
                    "topics": [
                        {
                            "name": "orders",
                            "partitions": [
                                {
                                    "partition_index": 0,
                                    "committed_offset": 100,
                                    "committed_leader_epoch": 4,
                                    "metadata": None,
                                    "error_code": 0,
                                }
                            ],
                        }
                    ],
                    "error_code": 16,
                }
            ],
        },
    ),
    # -- FindCoordinator (key 10). Both define v0-6.
    Case(
        "FindCoordinatorRequest",
        "group",
        (0, 1, 2, 3, 4, 6),
        {"key": "group-1", "key_type": 1, "coordinator_keys": ["group-1", "txn-2"]},
    ),
    Case(
        "FindCoordinatorResponse",
        "coordinator",
        (0, 1, 3, 4, 6),
        {
            "throttle_time_ms": 1,
            "error_code": 15,
            "error_message": None,
            "node_id": 2,
            "host": "broker-2.example",
            "port": 9093,
            "coordinators": [
                {
                    "key": "group-1",
                    "node_id": 2,
                    "host": "broker-2.example",
                    "port": 9093,
                    "error_code": 0,
                    "error_message": None,
                },
                {
                    "key": "txn-2",
                    "node_id": -1,
                    "host": "",
                    "port": -1,
                    "error_code": 15,
                    "error_message": "not available",
                },
            ],
        },
    ),
    # -- JoinGroup (key 11). Both define v0-9.
    Case(
        "JoinGroupRequest",
        "consumer",
        (0, 1, 5, 6, 7, 8, 9),
        {
            "group_id": "group-1",
            "session_timeout_ms": 45000,
            "rebalance_timeout_ms": 300000,
            "member_id": "",
            "group_instance_id": "static-1",
            "protocol_type": "consumer",
            "protocols": [
                {"name": "range", "metadata": b"\x00\x01\x00\x00\x00\x01\x00\x06orders"},
                {"name": "roundrobin", "metadata": b""},
            ],
            "reason": "rebalance please",
        },
    ),
    Case(
        "JoinGroupResponse",
        "leader",
        (0, 2, 5, 6, 7, 9),
        {
            "throttle_time_ms": 2,
            "error_code": 0,
            "generation_id": 5,
            "protocol_type": "consumer",
            "protocol_name": "range",
            "leader": "member-1",
            "skip_assignment": True,
            "member_id": "member-1",
            "members": [
                {"member_id": "member-1", "group_instance_id": None, "metadata": b"\x00\x01"},
                {"member_id": "member-2", "group_instance_id": "static-2", "metadata": b"x" * 40},
            ],
        },
    ),
    # -- SyncGroup (key 14). Both define v0-5.
    Case(
        "SyncGroupRequest",
        "leader-assignments",
        (0, 3, 4, 5),
        {
            "group_id": "group-1",
            "generation_id": 5,
            "member_id": "member-1",
            "group_instance_id": "static-1",
            "protocol_type": "consumer",
            "protocol_name": "range",
            "assignments": [
                {"member_id": "member-1", "assignment": b"\x00\x01\x02"},
                {"member_id": "member-2", "assignment": b""},
            ],
        },
    ),
    Case(
        "SyncGroupResponse",
        "assignment",
        (0, 1, 4, 5),
        {
            "throttle_time_ms": 4,
            "error_code": 0,
            "protocol_type": None,
            "protocol_name": "range",
            "assignment": b"\x00\x01\x00\x00\x00\x01",
        },
    ),
    # -- Heartbeat (key 12). Both define v0-4.
    Case(
        "HeartbeatRequest",
        "member",
        (0, 1, 3, 4),
        {
            "group_id": "group-1",
            "generation_id": 5,
            "member_id": "member-1",
            "group_instance_id": "static-1",
        },
    ),
    Case(
        "HeartbeatResponse", "rebalancing", (0, 1, 3, 4), {"throttle_time_ms": 8, "error_code": 27}
    ),
    # -- ApiVersions (key 18). Both define v0-4.
    Case(
        "ApiVersionsRequest",
        "software",
        (0, 1, 2, 3, 4),
        {"client_software_name": "aiokafka", "client_software_version": "1.0.0.dev0"},
    ),
    Case(
        "ApiVersionsResponse",
        "features",
        (0, 1, 2, 3, 4),
        {
            "error_code": 0,
            "api_keys": [
                {"api_key": 0, "min_version": 3, "max_version": 11},
                {"api_key": 18, "min_version": 0, "max_version": 4},
            ],
            "throttle_time_ms": 6,
            "supported_features": [
                {"name": "metadata.version", "min_version": 1, "max_version": 21},
                {"name": "kraft.version", "min_version": 0, "max_version": 1},
            ],
            "finalized_features_epoch": 314,
            "finalized_features": [
                {"name": "metadata.version", "max_version_level": 21, "min_version_level": 21}
            ],
            "zk_migration_ready": True,
        },
    ),
    # -- InitProducerId (key 22). Kafka 4.0 defines v0-5 (kafka-python v0-6).
    Case(
        "InitProducerIdRequest",
        "transactional",
        (0, 1, 2, 3, 4, 5),
        {
            "transactional_id": "txn-1",
            "transaction_timeout_ms": 60000,
            "producer_id": 4000,
            "producer_epoch": 3,
        },
    ),
    Case(
        "InitProducerIdRequest",
        "idempotent",
        (0, 2, 5),
        {"transactional_id": None, "transaction_timeout_ms": 2147483647},
    ),
    Case(
        "InitProducerIdResponse",
        "pid",
        (0, 1, 2, 4, 5),
        {"throttle_time_ms": 0, "error_code": 0, "producer_id": 9000000001, "producer_epoch": 7},
    ),
]
