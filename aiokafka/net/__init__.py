"""The connection layer: one broker connection (framing, correlation ids,
pipelining, a reader task), API version negotiation, SASL mechanisms (sans-I/O,
in :mod:`aiokafka.net.sasl`), TLS error translation and back-off.

:class:`~aiokafka.net.connection.AIOKafkaConnection` and
:class:`~aiokafka.net.config.ConnectionConfig` are the entry points; most code uses
them through :class:`aiokafka.cluster.AIOKafkaClient`.

:data:`DEFAULT_CLIENT_ID` is defined here, not in :mod:`.config`, so that the
consumer's constructor signature (its ``client_id`` default) does not load the
connection config at import (issue 14).
"""

from aiokafka import __version__

__all__ = ["DEFAULT_CLIENT_ID"]

#: The ``client_id`` of every client that is not given one (the producer's is
#: ``"aiokafka-producer"``, as in aiokafka).
DEFAULT_CLIENT_ID = f"aiokafka-{__version__}"
