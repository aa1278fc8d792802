"""Property-based round trips of every generated message at every version.

Strategies are derived from the same parsed definitions the generator uses
(:func:`tools.codegen.messages.load_named`), so a new field or version is covered
without touching this file.
"""

from __future__ import annotations

import importlib
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aiokafka.errors import KafkaProtocolError, UnsupportedVersionError
from aiokafka.protocol import api
from aiokafka.protocol import messages as msgs
from tools.codegen.__main__ import DEFAULT_SPEC
from tools.codegen.messages import load_named
from tools.codegen.spec import FieldSpec, MessageSpec, StructSpec

SPEC = DEFAULT_SPEC

_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def _cases() -> list[tuple[str, MessageSpec, int]]:
    out = []
    for mod, messages in load_named(SPEC):
        for msg in messages:
            for v in msg.versions:
                out.append((mod, msg, v))
    return out


CASES = _cases()


def _class(mod: str, name: str) -> Any:
    return getattr(importlib.import_module(f"aiokafka.protocol._gen.{mod}"), name)


def _scalar(kind: str) -> st.SearchStrategy[Any]:
    if kind in _INT_RANGES:
        lo, hi = _INT_RANGES[kind]
        return st.integers(lo, hi)
    if kind == "bool":
        return st.booleans()
    if kind == "float64":
        return st.floats(allow_nan=False)
    if kind == "uuid":
        return st.uuids()
    if kind == "string":
        return st.text(max_size=8)
    if kind in ("bytes", "records"):
        return st.binary(max_size=12)
    raise AssertionError(kind)


def _default(cls: Any, f: FieldSpec) -> Any:
    return getattr(cls(), f.py_name)


def _field_value(mod: str, msg: MessageSpec, f: FieldSpec, v: int) -> st.SearchStrategy[Any]:
    if f.struct is not None:
        elem: st.SearchStrategy[Any] = _struct(mod, msg, f.struct, v)
    else:
        elem = _scalar(f.elem_type)
    base = st.lists(elem, max_size=3) if f.is_array else elem
    if f.nullable(v):
        return st.one_of(st.none(), base)
    return base


def _struct(mod: str, msg: MessageSpec, spec: StructSpec, v: int) -> st.SearchStrategy[Any]:
    cls = _class(mod, spec.class_name)
    kwargs: dict[str, st.SearchStrategy[Any]] = {}
    tags: set[int] = set()
    for f in spec.fields:
        if f.present(v):
            kwargs[f.py_name] = _field_value(mod, msg, f, v)
            if f.tag is not None:
                tags.add(f.tag)
        else:
            kwargs[f.py_name] = st.just(_default(cls, f))
    if msg.is_flexible(v):
        unknown_tag = st.integers(0, 300).filter(lambda t: t not in tags)
        kwargs["unknown_tagged_fields"] = st.dictionaries(
            unknown_tag, st.binary(max_size=6), max_size=2
        )
    return st.builds(cls, **kwargs)


def _id(case: tuple[str, MessageSpec, int]) -> str:
    return f"{case[1].name}-v{case[2]}"


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_round_trip(case: tuple[str, MessageSpec, int], data: st.DataObject) -> None:
    mod, msg, v = case
    cls = _class(mod, msg.name)
    obj = data.draw(_struct(mod, msg, msg.body, v))
    encoded = obj.encode(v)
    assert obj.encode(v) == encoded  # encoding has no side effects
    decoded = cls.decode(encoded, v)
    assert decoded == obj
    assert decoded.encode(v) == encoded
    # Every strict prefix is malformed: decoders must notice, not return garbage.
    cut = data.draw(st.integers(0, max(0, len(encoded) - 1)))
    if cut < len(encoded):
        with pytest.raises(KafkaProtocolError):
            cls.decode(encoded[:cut], v)
    if msg.kind != "data":
        with pytest.raises(KafkaProtocolError):
            cls.decode(encoded + b"\x00", v)


def _non_default(cls: Any, f: FieldSpec) -> Any:
    """A value different from the field's default, or None if not easily made."""
    default = _default(cls, f)
    if f.is_array:
        return None if f.struct is not None else [_example(f.elem_type)]
    if f.struct is not None:
        return None
    value = _example(f.type)
    if value == default:
        value = _example(f.type, alt=True)
    return value


def _example(kind: str, alt: bool = False) -> Any:
    return {
        "bool": not alt,
        "float64": 2.5 if not alt else 3.5,
        "uuid": uuid.UUID(int=7 if not alt else 8),
        "string": "x" if not alt else "y",
        "bytes": b"x" if not alt else b"y",
        "records": b"x" if not alt else b"y",
    }.get(kind, 5 if not alt else 6)


def _absent_cases() -> list[tuple[str, MessageSpec, int, FieldSpec]]:
    out = []
    for mod, msg, v in CASES:
        for f in msg.body.fields:
            if not f.present(v) and _non_default(_class(mod, msg.name), f) is not None:
                out.append((mod, msg, v, f))
    return out


ABSENT = _absent_cases()


@pytest.mark.parametrize(
    "case", ABSENT, ids=[f"{c[1].name}-v{c[2]}-{c[3].py_name}" for c in ABSENT]
)
def test_field_absent_from_version(case: tuple[str, MessageSpec, int, FieldSpec]) -> None:
    mod, msg, v, f = case
    cls = _class(mod, msg.name)
    obj = cls()
    setattr(obj, f.py_name, _non_default(cls, f))
    if f.ignorable:
        # Kafka drops ignorable fields silently: same bytes as the default object.
        assert obj.encode(v) == cls().encode(v)
    else:
        with pytest.raises(UnsupportedVersionError):
            obj.encode(v)


def test_absent_field_checked_in_nested_struct() -> None:
    from aiokafka.protocol.messages import MetadataRequest, MetadataRequestTopic

    topic = MetadataRequestTopic(name="t", topic_id=uuid.UUID(int=1))
    # TopicId is ignorable (versions 10+): dropped at v9 ...
    assert MetadataRequest(topics=[topic]).encode(9) == MetadataRequest(
        topics=[MetadataRequestTopic(name="t")]
    ).encode(9)
    # ... while a null name needs v10+.
    with pytest.raises(UnsupportedVersionError):
        MetadataRequest(topics=[MetadataRequestTopic(name=None)]).encode(9)


def test_every_case_covered() -> None:
    names = {c[1].name for c in CASES}
    for required in ("Produce", "Fetch", "Metadata", "ShareAcknowledge", "PushTelemetry"):
        assert f"{required}Request" in names and f"{required}Response" in names
    assert {"ConsumerProtocolSubscription", "ConsumerProtocolAssignment"} <= names
    assert {"RequestHeader", "ResponseHeader"} <= names
    assert len(CASES) > 500


def test_unknown_tagged_fields_preserved() -> None:
    from aiokafka.protocol.messages import ApiVersion, ApiVersionsResponse

    resp = ApiVersionsResponse(
        api_keys=[ApiVersion(1, 0, 17, unknown_tagged_fields={9: b"\x01\x02"})],
        finalized_features_epoch=5,
        unknown_tagged_fields={7: b"abc", 200: b""},
    )
    data = resp.encode(3)
    back = ApiVersionsResponse.decode(data, 3)
    assert back.unknown_tagged_fields == {7: b"abc", 200: b""}
    assert back.api_keys[0].unknown_tagged_fields == {9: b"\x01\x02"}
    assert back.finalized_features_epoch == 5
    # Unknown tags cannot be carried by a non-flexible version.
    with pytest.raises(UnsupportedVersionError):
        resp.encode(2)


def test_version_out_of_range() -> None:
    from aiokafka.protocol.messages import MetadataRequest

    with pytest.raises(UnsupportedVersionError):
        MetadataRequest().encode(MetadataRequest.MAX_VERSION + 1)
    with pytest.raises(UnsupportedVersionError):
        MetadataRequest.decode(b"", -1)


def test_records_decode_zero_copy() -> None:
    from aiokafka.protocol.messages import PartitionProduceData, ProduceRequest, TopicProduceData

    req = ProduceRequest(
        acks=-1,
        timeout_ms=1000,
        topic_data=[
            TopicProduceData(
                name="t", partition_data=[PartitionProduceData(index=0, records=b"batch")]
            )
        ],
    )
    data = bytearray(req.encode(9))
    back = ProduceRequest.decode(data, 9)
    records = back.topic_data[0].partition_data[0].records
    assert isinstance(records, memoryview)
    assert records.obj is data  # a slice of the input, not a copy
    assert bytes(records) == b"batch"


@pytest.mark.parametrize("client_id", ["aiokafka-producer", None, "", "ünï"])
def test_request_header_parts_join_to_the_encoded_header(client_id: str | None) -> None:
    for request_type in (msgs.ProduceRequest, msgs.MetadataRequest, msgs.ApiVersionsRequest):
        for version in range(request_type.MIN_VERSION, request_type.MAX_VERSION + 1):
            request = request_type()
            for corr in (0, 7, 2**31 - 1):
                head, tail = api.request_header_parts(request_type.API_KEY, version, client_id)
                body = request.encode(version)
                joined = head + corr.to_bytes(4, "big", signed=True) + tail + body
                assert joined == api.encode_request(request, version, corr, client_id)


def test_response_decoder_decodes_as_decode_response() -> None:
    for response_type in (msgs.ProduceResponse, msgs.MetadataResponse, msgs.ApiVersionsResponse):
        for version in range(response_type.MIN_VERSION, response_type.MAX_VERSION + 1):
            decoder = api.response_decoder(response_type, version)
            body = response_type().encode(version)
            headers = [b"\x00\x00\x00\x07"]
            if api.response_header_version(response_type.API_KEY, version) == 1:
                # No tagged fields, and one unknown tagged field (skipped).
                headers = [b"\x00\x00\x00\x07\x00", b"\x00\x00\x00\x07\x01\x05\x02hi"]
            for header in headers:
                frame = memoryview(header + body)
                assert decoder(frame) == api.decode_response(response_type, version, frame)
            with pytest.raises(KafkaProtocolError):
                decoder(memoryview(b"\x00\x00"))
