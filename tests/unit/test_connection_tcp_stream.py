"""TcpStream's framing: frames split out of whatever chunks the socket gives."""

from __future__ import annotations

import asyncio
import random

import pytest

from aiokafka.net import streams
from aiokafka.net.streams import TcpStream


class _Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.aborted = False

    def abort(self) -> None:
        self.aborted = True


def frame(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


def reading(limit: int = 1 << 30) -> tuple[TcpStream, list[bytes], list[BaseException]]:
    stream = TcpStream()
    stream.connection_made(_Transport())
    frames: list[bytes] = []
    ends: list[BaseException] = []

    def check(size: int, prefix: bytes) -> None:
        if size < 4 or size > limit:
            raise ValueError(f"bad size {size} {prefix!r}")

    stream.start_reading(lambda f: frames.append(bytes(f)), ends.append, check)
    return stream, frames, ends


def feed(stream: TcpStream, data: bytes) -> None:
    """As the selector transport does: get_buffer, copy what fits, buffer_updated."""
    while data:
        buf = stream.get_buffer(-1)
        n = min(len(buf), len(data))
        assert n > 0
        buf[:n] = data[:n]
        stream.buffer_updated(n)
        data = data[n:]


@pytest.mark.parametrize("chunk", [1, 3, 7, 100, 70000, 1 << 20])
def test_frames_come_out_whole_however_the_bytes_are_split(chunk: int) -> None:
    rng = random.Random(chunk)
    sizes = [4, 10, 100, 5000] if chunk < 100 else [4, 10, 100, 5000, 70000, 200000]
    bodies = [rng.randbytes(rng.choice(sizes)) for _ in range(40)]
    wire = b"".join(frame(b) for b in bodies)
    stream, frames, ends = reading()
    for pos in range(0, len(wire), chunk):
        feed(stream, wire[pos : pos + chunk])
    assert frames == bodies
    assert not ends


def test_eof_at_a_frame_boundary_and_mid_frame() -> None:
    stream, frames, ends = reading()
    feed(stream, frame(b"abcd"))
    stream.connection_lost(None)
    assert frames == [b"abcd"]
    (end,) = ends
    assert isinstance(end, asyncio.IncompleteReadError) and end.partial == b""

    stream, frames, ends = reading()
    feed(stream, frame(b"x" * 100)[:50])
    stream.connection_lost(None)
    (end,) = ends
    assert isinstance(end, asyncio.IncompleteReadError) and end.partial


def test_a_large_frame_cut_by_eof_reports_what_was_read() -> None:
    stream, _, ends = reading()
    body = b"y" * (streams.READ_BUFFER * 2)
    feed(stream, frame(body)[: streams.READ_BUFFER + 10])
    stream.connection_lost(None)
    (end,) = ends
    assert isinstance(end, asyncio.IncompleteReadError)
    assert end.expected == len(body) and len(end.partial) == streams.READ_BUFFER + 6


def test_a_refused_size_stops_reading_once() -> None:
    stream, frames, ends = reading(limit=100)
    feed(stream, frame(b"ok!!") + frame(b"z" * 200) + frame(b"late"))
    assert frames == [b"ok!!"]
    (end,) = ends
    assert isinstance(end, ValueError)
    stream.connection_lost(None)
    assert len(ends) == 1  # told once


def test_a_failing_receiver_stops_reading_and_nothing_follows() -> None:
    stream = TcpStream()
    stream.connection_made(_Transport())
    ends: list[BaseException] = []
    seen: list[bytes] = []

    def on_frame(f: memoryview) -> None:
        seen.append(bytes(f))
        raise RuntimeError("boom")

    stream.start_reading(on_frame, ends.append, lambda size, prefix: None)
    feed(stream, frame(b"one!") + frame(b"two!"))
    assert seen == [b"one!"]
    assert [type(e) for e in ends] == [RuntimeError]


def test_bytes_before_start_reading_are_kept() -> None:
    stream = TcpStream()
    stream.connection_made(_Transport())
    feed(stream, frame(b"early") + frame(b"x" * 70000))
    frames: list[bytes] = []
    stream.start_reading(lambda f: frames.append(bytes(f)), lambda e: None, lambda s, p: None)
    assert frames == [b"early", b"x" * 70000]


def test_nothing_is_delivered_after_abort() -> None:
    stream, frames, ends = reading()
    stream.abort()
    feed(stream, frame(b"gone"))
    stream.connection_lost(None)
    assert frames == [] and ends == []
