"""The connection layer: one broker connection (framing, correlation ids,
pipelining, a reader task), API version negotiation, SASL mechanisms (sans-I/O,
in :mod:`aiokafka.net.sasl`), TLS error translation and back-off.

:class:`~aiokafka.net.connection.AIOKafkaConnection` and
:class:`~aiokafka.net.config.ConnectionConfig` are the entry points; most code uses
them through :class:`aiokafka.cluster.AIOKafkaClient`.

The configuration rules the clients share (``InvalidOptionError``, the option
checks, ``DEFAULT_CLIENT_ID``) live in :mod:`aiokafka.option_checks`.
"""
