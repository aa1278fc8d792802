"""aiokafka 0.14's import path of the Metadata request (compatibility shim).

Code written for aiokafka builds this request by hand and passes it to
``AIOKafkaClient.send(node_id, request)``: Datadog's ``ddtrace`` does so to read the
cluster id for its span tags, and imports this module when it instruments aiokafka (its
whole aiokafka integration failed to load without it); faust-streaming 0.15 reads the
controller's id from it before creating a topic, and imports ``MetadataRequest_v1``
too (it uses it only with aiokafka older than 0.13). The request is the generated
one; only the constructor takes aiokafka 0.14's arguments.
"""

from __future__ import annotations

from typing import ClassVar

from aiokafka.protocol._gen.metadata import MetadataRequest as _GeneratedRequest
from aiokafka.protocol._gen.metadata import MetadataRequestTopic
from aiokafka.protocol._gen.metadata import MetadataResponse as MetadataResponse

__all__ = ["MetadataRequest", "MetadataRequest_v1", "MetadataResponse"]


class MetadataRequest(_GeneratedRequest):
    """``MetadataRequest(topics=None, allow_auto_topic_creation=None)``, as in aiokafka 0.14.

    Args:
        topics: Topic names; ``None`` asks for every topic, ``[]`` for none (brokers and
            cluster id only).
        allow_auto_topic_creation: Let the broker create missing topics (when it is
            configured to); ``None`` means ``True``, as in aiokafka.
    """

    __slots__ = ()

    def __init__(
        self, topics: list[str] | None = None, allow_auto_topic_creation: bool | None = None
    ) -> None:
        super().__init__(
            topics=None if topics is None else [MetadataRequestTopic(name=t) for t in topics],
            allow_auto_topic_creation=(
                True if allow_auto_topic_creation is None else allow_auto_topic_creation
            ),
        )


class MetadataRequest_v1(MetadataRequest):
    """``MetadataRequest_v1(topics)``, as in aiokafka 0.14: version 1 of the request
    (``None`` asks for every topic, ``[]`` for none)."""

    __slots__ = ()
    MIN_VERSION: ClassVar[int] = 1
    MAX_VERSION: ClassVar[int] = 1

    def __init__(self, topics: list[str] | None) -> None:
        super().__init__(topics)
