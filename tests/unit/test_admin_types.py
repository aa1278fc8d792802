"""Admin input types, config validation and pure helpers (no broker)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import struct

import pytest

from aiokafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AIOKafkaAdminClient,
    AlterConfigOp,
    AlterConfigOpType,
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaOp,
    ConfigResource,
    ConfigResourceType,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    RecordsToDelete,
    ResourcePattern,
    ResourcePatternType,
    ResourceType,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from aiokafka.admin.groups import decode_assignment
from aiokafka.admin.scram import salted_password
from aiokafka.admin.topics import authorized_operations
from aiokafka.protocol._gen import consumer_protocol_assignment as cpa
from aiokafka.structs import TopicPartition


def test_unknown_option_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"'request_timeout'; did you mean 'request_timeout_ms'"):
        AIOKafkaAdminClient(request_timeout=10)
    with pytest.raises(TypeError, match="unknown option 'max_poll_records'"):  # aiokafka's kind
        AIOKafkaAdminClient(max_poll_records=10)
    with pytest.raises(ValueError, match="request_timeout_ms"):
        AIOKafkaAdminClient(request_timeout_ms=0)
    client = AIOKafkaAdminClient(bootstrap_servers="h:1", request_timeout_ms=1234)
    assert client.config.request_timeout_ms == 1234
    assert client.config.bootstrap_addresses == (("h", 1),)


def test_new_topic_keeps_aiokafka_signature_and_validates() -> None:
    t = NewTopic("t", 3, 2, topic_configs={"retention.ms": "1"})
    assert (t.name, t.num_partitions, t.replication_factor) == ("t", 3, 2)
    assert t.topic_configs == {"retention.ms": "1"}
    manual = NewTopic("t", -1, -1, replica_assignments={0: [1, 2]})
    assert manual.replica_assignments == {0: [1, 2]}
    with pytest.raises(ValueError, match="replica_assignments"):
        NewTopic("t", 2, 1, replica_assignments={0: [1]})
    with pytest.raises(ValueError, match="name"):
        NewTopic("", 1, 1)
    with pytest.raises(ValueError, match="num_partitions"):
        NewTopic("t", 0, 1)
    with pytest.raises(ValueError, match="replication_factor"):
        NewTopic("t", 1, -2)
    with pytest.raises(TypeError, match="num_partitions"):
        NewTopic("t", "3", 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="topic_configs"):
        NewTopic("t", 1, 1, topic_configs={"retention.ms": 1})  # type: ignore[dict-item]


def test_new_partitions_and_records_to_delete() -> None:
    assert NewPartitions(4).new_assignments is None
    assert NewPartitions(3, [[1], [2]]).new_assignments == [[1], [2]]
    with pytest.raises(ValueError, match="total_count"):
        NewPartitions(0)
    with pytest.raises(TypeError, match="new_assignments"):
        NewPartitions(3, [1, 2])  # type: ignore[list-item]
    assert RecordsToDelete(before_offset=5).before_offset == 5
    with pytest.raises(ValueError, match="before_offset"):
        RecordsToDelete(-2)


def test_config_resource_type_by_name_and_hash_by_identity() -> None:
    a = ConfigResource("topic", "t", {"x": "1"})
    b = ConfigResource(ConfigResourceType.TOPIC, "t")
    assert a.resource_type is ConfigResourceType.TOPIC
    assert a == b and hash(a) == hash(b)
    assert {a: 1}[b] == 1
    assert ConfigResource("BROKER", "").name == ""  # the cluster-wide default
    with pytest.raises(ValueError, match="resource_type"):
        ConfigResource("TABLE", "t")
    with pytest.raises(ValueError, match="name"):
        ConfigResource("TOPIC", "")


def test_alter_config_op() -> None:
    assert AlterConfigOp("a", "1").op_type is AlterConfigOpType.SET
    assert AlterConfigOp("a", op_type=AlterConfigOpType.DELETE).value is None
    with pytest.raises(TypeError, match="APPEND"):
        AlterConfigOp("a", None, AlterConfigOpType.APPEND)
    with pytest.raises(ValueError):
        AlterConfigOp("a", "1", 7)  # type: ignore[arg-type]


def test_offset_spec_values() -> None:
    assert OffsetSpec.earliest().timestamp == -2
    assert OffsetSpec.latest().timestamp == -1
    assert OffsetSpec.max_timestamp().timestamp == -3
    assert OffsetSpec.for_timestamp(1000).timestamp == 1000
    with pytest.raises(ValueError, match="timestamp_ms"):
        OffsetSpec.for_timestamp(-1)


def test_acl_types() -> None:
    pattern = ResourcePattern(ResourceType.TOPIC, "t", ResourcePatternType.PREFIXED)
    binding = AclBinding(pattern, "User:a", "*", AclOperation.READ)
    f = binding.to_filter()
    assert (f.resource_type, f.name, f.pattern_type, f.operation) == (
        ResourceType.TOPIC,
        "t",
        ResourcePatternType.PREFIXED,
        AclOperation.READ,
    )
    assert AclBindingFilter().resource_type is ResourceType.ANY
    with pytest.raises(ValueError, match="pattern_type MATCH"):
        ResourcePattern(ResourceType.TOPIC, "t", ResourcePatternType.MATCH)


def test_quota_types() -> None:
    e = ClientQuotaEntity.of({"user": "u", "client-id": None})
    assert e == ClientQuotaEntity.of({"client-id": None, "user": "u"})
    assert e.as_dict() == {"user": "u", "client-id": None}
    with pytest.raises(ValueError, match="entity"):
        ClientQuotaEntity.of({})
    with pytest.raises(TypeError, match="number"):
        ClientQuotaOp("producer_byte_rate", "1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ClientQuotaEntity"):
        ClientQuotaAlteration({"user": "u"}, [])  # type: ignore[arg-type]


def test_authorized_operations_bits() -> None:
    assert authorized_operations(-(2**31)) is None
    bits = (1 << AclOperation.READ) | (1 << AclOperation.DESCRIBE)
    assert authorized_operations(bits) == frozenset({AclOperation.READ, AclOperation.DESCRIBE})
    assert authorized_operations(0) == frozenset()


def test_decode_consumer_assignment() -> None:
    body = cpa.ConsumerProtocolAssignment(
        assigned_partitions=[cpa.TopicPartition(topic="t", partitions=[1, 0])], user_data=b"u"
    ).encode(1)
    assert decode_assignment(struct.pack(">h", 1) + body) == [
        TopicPartition("t", 0),
        TopicPartition("t", 1),
    ]
    assert decode_assignment(b"") == []
    assert decode_assignment(b"\x00\x01\xff") == []  # garbage from a custom assignor


def test_salted_password_matches_rfc7677_vector() -> None:
    # RFC 7677 section 3: user "user", password "pencil"; check the client proof
    # derived from our SaltedPassword.
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    salted = salted_password(ScramMechanism.SCRAM_SHA_256, "pencil", salt, 4096)
    nonce = "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
    auth_message = (
        "n=user,r=rOprNGfwEbeRWgbNEkqO,"
        f"r={nonce},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,"
        f"c=biws,r={nonce}"
    ).encode()
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    signature = hmac.new(stored_key, auth_message, hashlib.sha256).digest()
    proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
    assert base64.b64encode(proof) == b"dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="


def test_scram_upsertion_defaults() -> None:
    u = UserScramCredentialUpsertion("u", "scram-sha-512", "pw")
    assert u.mechanism is ScramMechanism.SCRAM_SHA_512 and u.iterations == 4096
    assert len(u.salt) == 32
    assert u.salted_password() == hashlib.pbkdf2_hmac("sha512", b"pw", u.salt, 4096)
    assert "pw" not in repr(u)


def test_items_grouped_as_aiokafka_responses() -> None:
    from aiokafka.admin.results import ConfigDescription, group_as_responses
    from aiokafka.errors import UnknownTopicOrPartitionError

    topic = ConfigResourceType.TOPIC
    missing = UnknownTopicOrPartitionError("topic 'c'")
    items = [
        ConfigDescription(topic, "a", {}),
        ConfigDescription(ConfigResourceType.BROKER, "1", {}),
        ConfigDescription(topic, "c", {}, error=missing),
    ]
    grouped = group_as_responses(items, lambda d: d.resource_type)
    # Typed view unchanged: same items, same order, equal to the ungrouped ones.
    assert grouped == items and [d.name for d in grouped] == ["a", "1", "c"]
    # aiokafka's view: the first item of a request lists the whole request.
    assert [(r[0], r[3]) for r in grouped[0].resources] == [(0, "a"), (3, "c")]
    assert [r[3] for r in grouped[1].resources] == ["1"]
    assert grouped[2].resources == []
    assert "response_peers" not in repr(grouped[0])


def test_acl_input_validation() -> None:
    with pytest.raises(ValueError, match="only valid in a filter"):
        ResourcePattern(ResourceType.ANY, "t")
    with pytest.raises(ValueError, match="only valid in a filter"):
        AclBinding(ResourcePattern(ResourceType.TOPIC, "t"), "User:a", "*", AclOperation.ANY)
    with pytest.raises(ValueError, match="principal"):
        AclBinding(ResourcePattern(ResourceType.TOPIC, "t"), "", "*", AclOperation.READ)


def test_scram_input_validation() -> None:
    with pytest.raises(ValueError, match="iterations"):
        UserScramCredentialUpsertion("u", "SCRAM-SHA-256", "p", iterations=10)
    with pytest.raises(ValueError, match="mechanism"):
        UserScramCredentialDeletion("u", "SCRAM-SHA-1")
