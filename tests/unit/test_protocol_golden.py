"""Golden bytes for the protocol codec.

Two independent sources of truth:

* kafka-python 3.0.12, whose protocol layer is a separate implementation of the same
  JSON definitions: for each hot API, identical values are built with its classes and
  with ours, and our encoding must equal its bytes byte for byte, and our decoder must
  read its bytes back to the same values (``_golden_values.CASES``).
* Literal hex vectors computed by hand from ``docs/protocol.html`` (request header v1/v2,
  response header v0/v1, ApiVersions v3, compact/nullable encodings), so the tests do not
  rely on kafka-python alone.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from aiokafka.errors import KafkaError, UnsupportedVersionError
from aiokafka.protocol import api, messages
from tools.codegen.spec import SAME_LAYOUT_VERSIONS

from ._golden_spec import (
    build_kp,
    build_legacy_kp,
    build_ours,
    for_version,
    is_flexible,
    legacy_kp_class,
    load_spec,
    parse_versions,
    to_tree,
    valid_versions,
)
from ._golden_values import CASES, TOPIC_ID, Case

kp_producer = pytest.importorskip("kafka.protocol.producer")
kp_consumer = pytest.importorskip("kafka.protocol.consumer")
kp_metadata = pytest.importorskip("kafka.protocol.metadata")


def _kp_class(name: str) -> Any:
    for module in (kp_producer, kp_consumer, kp_metadata):
        if hasattr(module, name):
            return getattr(module, name)
    raise LookupError(name)


def _ours(name: str) -> Any:
    return getattr(messages, name)


def _hexdiff(ours: bytes, theirs: bytes) -> str:
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), None)
    if at is None:
        at = min(len(ours), len(theirs))
    lo = max(0, at - 8)
    return (
        f"first difference at byte {at} (lengths {len(ours)} vs {len(theirs)}):\n"
        f"  ours   ...{ours[lo : at + 16].hex(' ')}\n"
        f"  theirs ...{theirs[lo : at + 16].hex(' ')}"
    )


PARAMS = [
    pytest.param(case, version, id=f"{case.message}-{case.label}-v{version}")
    for case in CASES
    for version in case.versions
]


def _pair(case: Case, version: int) -> tuple[Any, bytes]:
    """Our object and kafka-python's encoding of the same value at ``version``."""
    value = for_version(case.message, case.value, version)
    kp_bytes = bytes(build_kp(_kp_class(case.message), value, version).encode(version=version))
    return build_ours(_ours(case.message), value), kp_bytes


# ---------------------------------------------------------------------------
# The golden set itself: covered versions
# ---------------------------------------------------------------------------


def test_every_hot_api_has_request_and_response_in_flexible_and_not() -> None:
    hot = [
        "Produce",
        "Fetch",
        "ListOffsets",
        "Metadata",
        "OffsetCommit",
        "OffsetFetch",
        "FindCoordinator",
        "JoinGroup",
        "SyncGroup",
        "Heartbeat",
        "ApiVersions",
        "InitProducerId",
    ]
    for api_name in hot:
        for kind in ("Request", "Response"):
            name = api_name + kind
            versions = {v for c in CASES if c.message == name for v in c.versions}
            assert any(is_flexible(name, v) for v in versions), name
            assert any(not is_flexible(name, v) for v in versions), name


# ---------------------------------------------------------------------------
# Cross-check with kafka-python
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("case", "version"), PARAMS)
def test_encode_equals_kafka_python(case: Case, version: int) -> None:
    ours, kp_bytes = _pair(case, version)
    encoded = ours.encode(version)
    assert isinstance(encoded, bytes)
    assert encoded == kp_bytes, _hexdiff(encoded, kp_bytes)
    # Encoding has no side effects: a second call gives the same bytes.
    assert ours.encode(version) == encoded


@pytest.mark.parametrize(("case", "version"), PARAMS)
def test_decode_kafka_python_bytes(case: Case, version: int) -> None:
    ours, kp_bytes = _pair(case, version)
    cls = _ours(case.message)
    decoded = cls.decode(kp_bytes, version)
    assert type(decoded) is cls
    assert to_tree(decoded) == to_tree(ours)
    # A memoryview (how frames arrive from the connection) decodes the same.
    assert to_tree(cls.decode(memoryview(kp_bytes), version)) == to_tree(ours)


@pytest.mark.parametrize(("case", "version"), PARAMS)
def test_framing_equals_kafka_python(case: Case, version: int) -> None:
    """Header + body, as the connection sends/receives them, equal kafka-python's."""
    value = for_version(case.message, case.value, version)
    kp_obj = build_kp(_kp_class(case.message), value, version)
    ours = build_ours(_ours(case.message), value)
    if case.message.endswith("Request"):
        kp_obj.with_header(correlation_id=0x5A5A0102, client_id="golden-client")
        expected = bytes(kp_obj.encode(version=version, header=True))
        got = api.encode_request(ours, version, 0x5A5A0102, "golden-client")
        assert got == expected, _hexdiff(got, expected)
    else:
        kp_obj.with_header(correlation_id=0x5A5A0102)
        # The version was set at construction: kafka-python's encode(version=...) would
        # try to store it in the response header, which has no version field.
        frame = bytes(kp_obj.encode(header=True))
        assert api.read_correlation_id(frame) == 0x5A5A0102
        decoded = api.decode_response(_ours(case.message), version, frame)
        assert to_tree(decoded) == to_tree(ours)


def _legacy_params() -> list[Any]:
    params = []
    for case in CASES:
        lo, hi = valid_versions(case.message)
        for version in range(lo, hi + 1):
            if is_flexible(case.message, version):
                continue  # the legacy classes' compact encodings are not a reference
            if legacy_kp_class(case.message, version) is None:
                continue
            if not _value_fits(case, version):
                continue
            params.append(pytest.param(case, version, id=f"{case.message}-{case.label}-v{version}"))
    return params


def _value_fits(case: Case, version: int) -> bool:
    # MetadataRequest.topics is not nullable at v0 ("all topics" is an empty list there).
    return not (case.message == "MetadataRequest" and version == 0 and case.value["topics"] is None)


LEGACY_PARAMS = _legacy_params()


def test_legacy_cross_check_reaches_versions_the_json_classes_lack() -> None:
    # Produce v0-2, Fetch v0-3, ListOffsets v0, OffsetCommit v0-1, OffsetFetch v0.
    covered = {(p.values[0].message, p.values[1]) for p in LEGACY_PARAMS}
    for pair in [
        ("ProduceRequest", 0),
        ("FetchResponse", 0),
        ("ListOffsetsRequest", 0),
        ("ListOffsetsResponse", 0),
        ("OffsetCommitRequest", 1),
        ("OffsetFetchResponse", 0),
    ]:
        assert pair in covered


@pytest.mark.parametrize(("case", "version"), LEGACY_PARAMS)
def test_encode_equals_kafka_python_legacy_classes(case: Case, version: int) -> None:
    """Non-flexible versions against kafka-python's older, hand-written classes."""
    value = for_version(case.message, case.value, version)
    legacy = build_legacy_kp(legacy_kp_class(case.message, version), case.message, value, version)
    expected = bytes(legacy.encode())
    ours = build_ours(_ours(case.message), value)
    got = ours.encode(version)
    assert got == expected, _hexdiff(got, expected)
    assert to_tree(_ours(case.message).decode(expected, version)) == to_tree(ours)


# ---------------------------------------------------------------------------
# Class metadata against the JSON definitions (read independently of the generator)
# ---------------------------------------------------------------------------


def _api_message_names() -> list[str]:
    names = []
    for name in dir(messages):
        cls = getattr(messages, name)
        if isinstance(cls, type) and hasattr(cls, "API_KEY") and hasattr(cls, "MAX_VERSION"):
            names.append(name)
    return sorted(names)


def test_messages_module_exports_every_hot_api() -> None:
    names = set(_api_message_names())
    for case in CASES:
        assert case.message in names


@pytest.mark.parametrize("name", _api_message_names())
def test_class_metadata_matches_json(name: str) -> None:
    cls = _ours(name)
    spec = load_spec(name)
    assert cls.API_KEY == spec["apiKey"]
    lo, hi = valid_versions(name)
    if name in SAME_LAYOUT_VERSIONS:
        # A version added by Kafka after these definitions, repeating the previous layout.
        new_hi, base = SAME_LAYOUT_VERSIONS[name]
        assert (hi, new_hi) == (base, base + 1)
        hi = new_hi
    assert (cls.MIN_VERSION, cls.MAX_VERSION) == (lo, hi)
    flex = parse_versions(spec["flexibleVersions"])
    assert cls.FLEXIBLE_MIN == (flex[0] if flex[0] <= flex[1] else None)
    if name.endswith("Request"):
        assert cls.RESPONSE_TYPE is _ours(name[: -len("Request")] + "Response")
        assert messages.REQUEST_TYPES[cls.API_KEY] is cls
    else:
        assert messages.RESPONSE_TYPES[cls.API_KEY] is cls


@pytest.mark.parametrize(
    "name", sorted({c.message for c in CASES if c.message.endswith("Request")})
)
def test_header_versions(name: str) -> None:
    cls = _ours(name)
    lo, hi = valid_versions(name)
    for version in range(lo, hi + 1):
        flexible = is_flexible(name, version)
        assert api.request_header_version(cls.API_KEY, version) == (2 if flexible else 1)
        # ApiVersions responses keep header v0 so that a client of any version can read
        # the error code of a broker that does not know the requested version.
        expected = 1 if flexible and cls.API_KEY != 18 else 0
        assert api.response_header_version(cls.API_KEY, version) == expected


# ---------------------------------------------------------------------------
# Literal vectors, hand-computed from docs/protocol.html
# ---------------------------------------------------------------------------


def _hex(*parts: str) -> bytes:
    """Bytes from hex chunks (one per field, spaces allowed, so each can be commented)."""
    return bytes.fromhex("".join(parts))


CLI = "0003 636c69"  # client_id NULLABLE_STRING "cli": int16 length + UTF-8


def test_request_header_v1_heartbeat_v0() -> None:
    req = messages.HeartbeatRequest(group_id="g", generation_id=1, member_id="m")
    expected = _hex(
        "000c",  # api key 12
        "0000",  # api version 0
        "00000007",  # correlation id
        CLI,
        "0001 67",  # group_id STRING "g"
        "00000001",  # generation_id
        "0001 6d",  # member_id STRING "m"
    )
    assert api.encode_request(req, 0, 7, "cli") == expected


def test_request_header_v1_null_client_id() -> None:
    req = messages.HeartbeatRequest(group_id="g", generation_id=1, member_id="m")
    expected = _hex(
        "000c 0003 00000007",
        "ffff",  # client_id null: length -1
        "0001 67",
        "00000001",
        "0001 6d",
        "ffff",  # group_instance_id (v3+) NULLABLE_STRING null
    )
    assert api.encode_request(req, 3, 7, None) == expected


def test_request_header_v2_heartbeat_v4() -> None:
    req = messages.HeartbeatRequest(group_id="g", generation_id=1, member_id="m")
    expected = _hex(
        "000c 0004",
        "01020304",  # correlation id
        CLI,  # client_id stays a non-compact string even in header v2
        "00",  # header tagged fields: none
        "02 67",  # COMPACT_STRING "g": unsigned varint length + 1
        "00000001",
        "02 6d",
        "00",  # group_instance_id COMPACT_NULLABLE_STRING null
        "00",  # body tagged fields: none
    )
    assert api.encode_request(req, 4, 0x01020304, "cli") == expected


def test_compact_string_length_uses_varint() -> None:
    req = messages.HeartbeatRequest(group_id="g" * 200, generation_id=-1, member_id="")
    expected = _hex(
        "c9 01",  # 200 + 1 = 201 = 0b1_1001001 -> varint c9 01
        "67" * 200,
        "ffffffff",
        "01",  # member_id "" -> length + 1 = 1
        "00",
        "00",
    )
    assert req.encode(4) == expected
    assert messages.HeartbeatRequest.decode(expected, 4) == req


def test_api_versions_v3_request() -> None:
    req = messages.ApiVersionsRequest(
        client_software_name="aiokafka", client_software_version="1.0.0"
    )
    expected = _hex(
        "0012",  # api key 18
        "0003",
        "00000001",
        "0008 61696f6b61666b61",  # header v2 client_id "aiokafka" (int16 length)
        "00",  # header tagged fields
        "09 61696f6b61666b61",  # client_software_name COMPACT_STRING
        "06 312e302e30",  # client_software_version "1.0.0"
        "00",
    )
    assert api.encode_request(req, 3, 1, "aiokafka") == expected
    assert api.request_header_version(18, 3) == 2


def test_api_versions_v3_response_header_v0_with_tagged_fields() -> None:
    frame = _hex(
        "00000001",  # response header v0: correlation id only, no tag buffer
        "0000",  # error_code
        "03",  # api_keys: compact array of 2
        "0000 0003 000b 00",  # Produce 3..11, no tags
        "0012 0000 0004 00",  # ApiVersions 0..4, no tags
        "00000000",  # throttle_time_ms
        "02",  # two tagged fields, ascending tags
        "01 08 000000000000002a",  # tag 1 finalized_features_epoch = 42
        "07 02 abcd",  # tag 7: unknown to this version, must be skipped
    )
    assert api.read_correlation_id(frame) == 1
    assert api.response_header_version(18, 3) == 0
    resp = api.decode_response(messages.ApiVersionsResponse, 3, frame)
    assert resp.error_code == 0
    assert [(k.api_key, k.min_version, k.max_version) for k in resp.api_keys] == [
        (0, 3, 11),
        (18, 0, 4),
    ]
    assert resp.throttle_time_ms == 0
    assert resp.finalized_features_epoch == 42
    assert resp.supported_features == []
    assert resp.zk_migration_ready is False


def test_response_header_v1_skips_unknown_header_tags() -> None:
    frame = _hex(
        "0000002a",  # correlation id
        "01 00 01 ff",  # header tagged fields: one, tag 0, 1 byte
        "00000064",  # throttle_time_ms 100
        "001b",  # error_code 27
        "00",
    )
    assert api.response_header_version(12, 4) == 1
    resp = api.decode_response(messages.HeartbeatResponse, 4, frame)
    assert (resp.throttle_time_ms, resp.error_code) == (100, 27)


def test_response_header_v0_heartbeat_v3() -> None:
    frame = _hex("0000002a", "00000064", "001b")
    resp = api.decode_response(messages.HeartbeatResponse, 3, frame)
    assert (resp.throttle_time_ms, resp.error_code) == (100, 27)


def test_null_topics_array_metadata() -> None:
    req = messages.MetadataRequest(topics=None, allow_auto_topic_creation=True)
    assert req.encode(1) == _hex("ffffffff")  # ARRAY null: int32 length -1
    assert req.encode(4) == _hex("ffffffff", "01")
    # COMPACT_ARRAY null is varint 0; then allow_auto, include_cluster/topic ops, tags.
    assert req.encode(9) == _hex("00", "01", "00", "00", "00")


def test_uuid_and_compact_nullable_string_metadata_v10() -> None:
    topic = messages.MetadataRequestTopic(topic_id=TOPIC_ID, name=None)
    req = messages.MetadataRequest(topics=[topic], allow_auto_topic_creation=False)
    expected = _hex(
        "02",  # compact array of 1
        TOPIC_ID.hex,  # UUID: 16 raw bytes
        "00",  # name: null
        "00",  # topic tagged fields
        "00",  # allow_auto_topic_creation false
        "00",  # include_cluster_authorized_operations (v8-10)
        "00",  # include_topic_authorized_operations
        "00",
    )
    assert req.encode(10) == expected
    back = messages.MetadataRequest.decode(expected, 10)
    assert back.topics is not None
    assert isinstance(back.topics[0].topic_id, uuid.UUID)
    assert back.topics[0].topic_id == TOPIC_ID
    assert back.topics[0].name is None


def test_produce_records_decode_is_zero_copy_memoryview() -> None:
    body = _hex(
        "ffff",  # transactional_id null (v3+)
        "0001",  # acks 1
        "00001388",  # timeout 5000
        "00000001 0001 74",  # one topic "t"
        "00000001 00000000",  # one partition, index 0
        "00000003 aabbcc",  # records: BYTES of 3
    )
    req = messages.ProduceRequest.decode(body, 3)
    records = req.topic_data[0].partition_data[0].records
    assert isinstance(records, memoryview)
    assert bytes(records) == b"\xaa\xbb\xcc"
    assert req.encode(3) == body


# ---------------------------------------------------------------------------
# Version gating on encode
# ---------------------------------------------------------------------------


def test_field_missing_in_version_raises_unsupported_version() -> None:
    with pytest.raises(UnsupportedVersionError):
        messages.HeartbeatRequest(group_id="g", group_instance_id="s").encode(2)  # v3+
    with pytest.raises(UnsupportedVersionError):
        messages.ProduceRequest(transactional_id="t").encode(2)  # v3+
    with pytest.raises(UnsupportedVersionError):
        messages.ListOffsetsRequest(isolation_level=1).encode(1)  # v2+


def test_ignorable_field_missing_in_version_is_dropped() -> None:
    # Fields marked "ignorable" in the JSON are left out silently, as Kafka's own
    # generated code does: JoinGroupRequest.reason (v8+), FetchRequest.rack_id (v11+).
    with_reason = messages.JoinGroupRequest(group_id="g", reason="why").encode(7)
    assert with_reason == messages.JoinGroupRequest(group_id="g").encode(7)
    with_rack = messages.FetchRequest(max_wait_ms=1, rack_id="r").encode(10)
    assert with_rack == messages.FetchRequest(max_wait_ms=1).encode(10)


def test_default_value_of_missing_field_is_fine() -> None:
    # reason defaults to null; leaving it so must not stop encoding at v7.
    body = messages.JoinGroupRequest(group_id="g").encode(7)
    assert messages.JoinGroupRequest.decode(body, 7).group_id == "g"


def test_null_in_non_nullable_version_is_rejected() -> None:
    # MetadataRequest.topics becomes nullable only at v1.
    with pytest.raises((KafkaError, ValueError, TypeError)):
        messages.MetadataRequest(topics=None).encode(0)


@pytest.mark.parametrize("name", sorted(SAME_LAYOUT_VERSIONS))
def test_same_layout_version_encodes_like_the_previous_one(name: str) -> None:
    """Produce v12 / TxnOffsetCommit v5 (KIP-890 part 2) only change what the broker
    does: the body bytes are those of the version before."""
    new, base = SAME_LAYOUT_VERSIONS[name]
    cls = _ours(name)
    value = _SAME_LAYOUT_VALUES[name]()
    assert value.encode(new) == value.encode(base)
    assert cls.decode(value.encode(base), new) == value
    frame = api.encode_request(value, new, correlation_id=7, client_id="c")
    assert int.from_bytes(frame[2:4], "big") == new  # the header: api key, then version


_SAME_LAYOUT_VALUES: dict[str, Any] = {
    "ProduceRequest": lambda: messages.ProduceRequest(
        transactional_id="t",
        acks=-1,
        timeout_ms=30000,
        topic_data=[
            messages.TopicProduceData(
                name="a", partition_data=[messages.PartitionProduceData(index=0, records=b"xyz")]
            )
        ],
    ),
    "ProduceResponse": lambda: messages.ProduceResponse(
        responses=[
            messages.TopicProduceResponse(
                name="a",
                partition_responses=[messages.PartitionProduceResponse(index=0, base_offset=5)],
            )
        ],
        throttle_time_ms=3,
    ),
    "TxnOffsetCommitRequest": lambda: messages.TxnOffsetCommitRequest(
        transactional_id="t",
        group_id="g",
        producer_id=4,
        producer_epoch=2,
        generation_id=9,
        member_id="m",
        topics=[
            messages.TxnOffsetCommitRequestTopic(
                name="a",
                partitions=[
                    messages.TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=8)
                ],
            )
        ],
    ),
    "TxnOffsetCommitResponse": lambda: messages.TxnOffsetCommitResponse(
        throttle_time_ms=1,
        topics=[
            messages.TxnOffsetCommitResponseTopic(
                name="a",
                partitions=[messages.TxnOffsetCommitResponsePartition(partition_index=0)],
            )
        ],
    ),
}
