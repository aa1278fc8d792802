"""aiokafka 0.14's import path of ``AbstractTokenProvider`` (compatibility shim).

aiokafka 0.14 defines the OAUTHBEARER token provider interface in ``aiokafka.abc`` and
its ``aiokafka.conn`` (the connection module) imports it from there; faust-streaming
0.15 imports it from ``aiokafka.conn`` (``faust/auth.py``), so ``faust.auth`` failed to
import without this module. Only that name is offered: our connection is
:class:`aiokafka.net.connection.AIOKafkaConnection`.
"""

from __future__ import annotations

from aiokafka.abc import AbstractTokenProvider

__all__ = ["AbstractTokenProvider"]
