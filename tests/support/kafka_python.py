"""kafka-python (a test-only peer) as the tests use it, with one socket leak closed.

kafka-python 3.0.12's ``KafkaNetSocket.connect`` creates a socket and hands it to
``sock_connect``; when that raises (refused, timed out) or its coroutine is dropped
because the client is closed mid-connect, nobody closes the socket. Its finaliser then
raises ``ResourceWarning: unclosed socket`` at some later garbage collection, which
``filterwarnings = error`` reports against whichever unrelated test happens to be
running. The wrapper closes the socket on any exception and re-raises it unchanged.
"""

from __future__ import annotations

import functools
import importlib
import socket
from typing import Any


def close_sockets_on_failed_connect() -> None:
    """Wrap ``kafka.net.inet.KafkaNetSocket.sock_connect`` once, if kafka-python has it."""
    try:
        inet = importlib.import_module("kafka.net.inet")
    except ImportError:  # no kafka-python, or one without kafka.net: nothing to patch
        return
    cls = inet.KafkaNetSocket
    original = cls.sock_connect
    if getattr(original, "_closes_on_failure", False):
        return

    @functools.wraps(original)
    async def sock_connect(self: Any, net: Any, sock: socket.socket, *args: Any, **kw: Any) -> Any:
        try:
            return await original(self, net, sock, *args, **kw)
        except BaseException:  # re-raised: only the socket's release is added
            sock.close()
            raise

    sock_connect._closes_on_failure = True  # type: ignore[attr-defined]
    cls.sock_connect = sock_connect
