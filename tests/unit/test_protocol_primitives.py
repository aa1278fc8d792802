"""Bytes in, bytes out: varints, strings, uuid, tagged fields and headers."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aiokafka.errors import KafkaProtocolError, UnsupportedVersionError
from aiokafka.protocol import primitives as p
from aiokafka.protocol.api import (
    decode_response,
    encode_request,
    read_correlation_id,
    request_header_version,
    response_header_version,
)
from aiokafka.protocol.messages import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    MetadataRequest,
    MetadataResponse,
    SaslHandshakeRequest,
)

# -- varints -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (0, b"\x00"),
        (1, b"\x01"),
        (127, b"\x7f"),
        (128, b"\x80\x01"),
        (300, b"\xac\x02"),
        (16383, b"\xff\x7f"),
        (16384, b"\x80\x80\x01"),
        (2**32 - 1, b"\xff\xff\xff\xff\x0f"),
    ],
)
def test_unsigned_varint(value: int, encoded: bytes) -> None:
    assert p.encode_unsigned_varint(value) == encoded
    assert p.read_unsigned_varint(encoded, 0) == (value, len(encoded))
    assert p.read_unsigned_varint(b"xx" + encoded, 2) == (value, 2 + len(encoded))


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (0, b"\x00"),
        (-1, b"\x01"),
        (1, b"\x02"),
        (-2, b"\x03"),
        (63, b"\x7e"),
        (-64, b"\x7f"),
        (64, b"\x80\x01"),
        (2**31 - 1, b"\xfe\xff\xff\xff\x0f"),
        (-(2**31), b"\xff\xff\xff\xff\x0f"),
    ],
)
def test_zigzag_varint(value: int, encoded: bytes) -> None:
    assert p.encode_varint(value) == encoded
    assert p.decode_varint(encoded) == value


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        (0, b"\x00"),
        (-1, b"\x01"),
        (2**63 - 1, b"\xfe" + b"\xff" * 8 + b"\x01"),
        (-(2**63), b"\xff" * 9 + b"\x01"),
    ],
)
def test_zigzag_varlong(value: int, encoded: bytes) -> None:
    assert p.encode_varlong(value) == encoded
    assert p.decode_varlong(encoded) == value


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_round_trip(value: int) -> None:
    assert p.decode_varlong(p.encode_varlong(value)) == value


def test_varint_out_of_range_and_malformed() -> None:
    with pytest.raises(ValueError):
        p.encode_varint(2**31)
    with pytest.raises(ValueError):
        p.encode_unsigned_varint(-1)
    with pytest.raises(KafkaProtocolError):
        p.read_unsigned_varint(b"\x80\x80", 0)  # runs off the end
    with pytest.raises(KafkaProtocolError):
        p.read_unsigned_varint(b"\x80\x80\x80\x80\x80\x01", 0)  # more than 5 bytes
    with pytest.raises(KafkaProtocolError):
        p.decode_varint(b"\x00\x00")  # trailing byte


# -- strings, bytes, uuid ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "compact", "encoded"),
    [
        ("", False, b"\x00\x00"),
        ("abc", False, b"\x00\x03abc"),
        (None, False, b"\xff\xff"),
        ("", True, b"\x01"),
        ("abc", True, b"\x04abc"),
        (None, True, b"\x00"),
        ("\u00e9", True, b"\x03\xc3\xa9"),
    ],
)
def test_strings(value: str | None, compact: bool, encoded: bytes) -> None:
    w = bytearray()
    p.write_string(w, value, compact=compact, nullable=True)
    assert bytes(w) == encoded
    assert p.read_string(encoded, 0, compact=compact, nullable=True) == (value, len(encoded))


def test_string_errors() -> None:
    with pytest.raises(KafkaProtocolError):
        p.read_string(b"\xff\xff", 0, compact=False, nullable=False)
    with pytest.raises(KafkaProtocolError):
        p.read_string(b"\x00\x05ab", 0, compact=False, nullable=True)
    with pytest.raises(KafkaProtocolError):
        p.read_string(b"\x03\xff\xfe", 0, compact=True, nullable=False)  # not UTF-8
    with pytest.raises(ValueError):
        p.write_string(bytearray(), None, compact=True, nullable=False)


def test_long_compact_string_uses_multibyte_length() -> None:
    w = bytearray()
    p.write_string(w, "x" * 200, compact=True, nullable=False)
    assert bytes(w[:2]) == b"\xc9\x01"  # 201 = len + 1
    assert p.read_string(w, 0, compact=True, nullable=False) == ("x" * 200, 202)


@pytest.mark.parametrize(
    ("value", "compact", "encoded"),
    [
        (b"", False, b"\x00\x00\x00\x00"),
        (b"\x01\x02", False, b"\x00\x00\x00\x02\x01\x02"),
        (None, False, b"\xff\xff\xff\xff"),
        (b"\x01\x02", True, b"\x03\x01\x02"),
        (None, True, b"\x00"),
    ],
)
def test_bytes(value: bytes | None, compact: bool, encoded: bytes) -> None:
    w = bytearray()
    p.write_bytes(w, value, compact=compact, nullable=True)
    assert bytes(w) == encoded
    assert p.read_bytes(encoded, 0, compact=compact, nullable=True) == (value, len(encoded))


def test_uuid() -> None:
    u = uuid.UUID("0123456789abcdef0123456789abcdef")
    w = bytearray()
    p.write_uuid(w, u)
    assert bytes(w) == bytes.fromhex("0123456789abcdef0123456789abcdef")
    assert p.read_uuid(w, 0) == (u, 16)
    assert p.ZERO_UUID.bytes == b"\x00" * 16
    with pytest.raises(KafkaProtocolError):
        p.read_uuid(b"\x00" * 15, 0)


# -- tagged fields ---------------------------------------------------------------------------


def test_tagged_fields_sorted_and_round_trip() -> None:
    w = bytearray()
    p.write_tagged_fields(w, {300: b"z", 0: b"ab"})
    assert bytes(w) == b"\x02" + b"\x00\x02ab" + b"\xac\x02\x01z"
    assert p.read_tagged_fields(w, 0) == ({0: b"ab", 300: b"z"}, len(w))
    w = bytearray()
    p.write_tagged_fields(w, {})
    assert bytes(w) == b"\x00"
    with pytest.raises(KafkaProtocolError):
        p.read_tagged_fields(b"\x01\x00\x05ab", 0)


def test_generated_tagged_field_bytes() -> None:
    # ApiVersionsResponse v3: FinalizedFeaturesEpoch is tag 1 (int64), written only when
    # it differs from its default -1; an unknown tag 5 is carried through in tag order.
    resp = ApiVersionsResponse(finalized_features_epoch=3, unknown_tagged_fields={5: b"\x07"})
    body = resp.encode(3)
    expected = (
        b"\x00\x00"  # error_code
        b"\x01"  # api_keys: compact empty array
        b"\x00\x00\x00\x00"  # throttle_time_ms
        b"\x02"  # two tagged fields
        b"\x01\x08\x00\x00\x00\x00\x00\x00\x00\x03"  # tag 1, 8 bytes
        b"\x05\x01\x07"  # tag 5, 1 byte
    )
    assert body == expected
    assert ApiVersionsResponse.decode(body, 3) == resp
    assert ApiVersionsResponse().encode(3) == b"\x00\x00\x01\x00\x00\x00\x00\x00"


# -- headers and framing -----------------------------------------------------------------


def test_header_versions() -> None:
    assert request_header_version(ApiVersionsRequest.API_KEY, 2) == 1
    assert request_header_version(ApiVersionsRequest.API_KEY, 3) == 2
    assert response_header_version(ApiVersionsRequest.API_KEY, 3) == 0  # always v0
    assert request_header_version(MetadataRequest.API_KEY, 8) == 1
    assert request_header_version(MetadataRequest.API_KEY, 9) == 2
    assert response_header_version(MetadataRequest.API_KEY, 8) == 0
    assert response_header_version(MetadataRequest.API_KEY, 9) == 1
    assert request_header_version(SaslHandshakeRequest.API_KEY, 1) == 1  # never flexible
    assert request_header_version(7, 0) == 0  # ControlledShutdown v0
    with pytest.raises(ValueError, match="api_key"):
        request_header_version(9999, 0)


def test_encode_request_header_v1() -> None:
    frame = encode_request(SaslHandshakeRequest(mechanism="PLAIN"), 1, 42, "cli")
    assert frame == (
        b"\x00\x11\x00\x01\x00\x00\x00\x2a"  # api_key 17, version 1, correlation id 42
        b"\x00\x03cli"  # client id: int16-length string
        b"\x00\x05PLAIN"
    )
    null_client = encode_request(SaslHandshakeRequest(mechanism="PLAIN"), 1, 42, None)
    assert null_client[8:10] == b"\xff\xff"


def test_encode_request_header_v2_keeps_non_compact_client_id() -> None:
    req = ApiVersionsRequest(client_software_name="ak", client_software_version="1")
    frame = encode_request(req, 3, 7, "cli")
    assert frame == (
        b"\x00\x12\x00\x03\x00\x00\x00\x07"
        b"\x00\x03cli"  # still an int16-length string in header v2
        b"\x00"  # header tagged fields
        b"\x03ak\x021\x00"  # compact strings + body tagged fields
    )


def test_decode_response_header_v0_and_v1() -> None:
    body = ApiVersionsResponse(error_code=35).encode(3)
    frame = b"\x00\x00\x00\x09" + body  # ApiVersions: header v0 even at v3
    assert read_correlation_id(frame) == 9
    assert decode_response(ApiVersionsResponse, 3, frame).error_code == 35

    meta = MetadataResponse(cluster_id="c", controller_id=1)
    frame = b"\x00\x00\x00\x0a" + b"\x01\x00\x02\x01x" + meta.encode(12)  # header v1 + tags
    assert decode_response(MetadataResponse, 12, memoryview(frame)) == meta
    frame_v0 = b"\x00\x00\x00\x0a" + meta.encode(8)
    assert decode_response(MetadataResponse, 8, frame_v0) == MetadataResponse(
        cluster_id="c", controller_id=1
    )


def test_decode_response_malformed() -> None:
    with pytest.raises(KafkaProtocolError):
        read_correlation_id(b"\x00\x01")
    with pytest.raises(KafkaProtocolError):
        decode_response(ApiVersionsResponse, 0, b"\x00\x00")
    with pytest.raises(KafkaProtocolError):
        decode_response(ApiVersionsResponse, 0, b"\x00\x00\x00\x01\x00")
    with pytest.raises(UnsupportedVersionError):
        decode_response(ApiVersionsResponse, 99, b"\x00\x00\x00\x01")


@given(st.integers(0, 2**32 - 1))
def test_unrolled_uvarint_matches_reference(value: int) -> None:
    data = memoryview(p.encode_unsigned_varint(value) + b"\xff")
    assert p.uvarint_at(data, 0) == p.read_unsigned_varint(data, 0)


def test_unrolled_uvarint_rejects_overlong_and_short() -> None:
    with pytest.raises(KafkaProtocolError):
        p.uvarint_at(memoryview(b"\xff\xff\xff\xff\x10"), 0)
    with pytest.raises(IndexError):  # the generated decode() turns this into KafkaProtocolError
        p.uvarint_at(memoryview(b"\x80\x80"), 0)
