"""aiokafka 0.14's import path of the CreateTopics request (compatibility shim).

Code written for aiokafka builds this request by hand and sends it with
``AIOKafkaClient.send(node_id, request)``: faust-streaming 0.15 creates its topics this
way (``Transport._really_create_topic`` in ``faust/transport/drivers/aiokafka.py``) and
imports this module with its Kafka driver. The request and response are the generated
ones; the constructor takes aiokafka 0.14's positional tuples, and the response also
answers aiokafka 0.14's ``topic_errors``. aiokafka 0.14's other admin requests in this
module are not offered: :class:`aiokafka.admin.AIOKafkaAdminClient` does what they do.
"""

from __future__ import annotations

from collections.abc import Sequence

from aiokafka.protocol._gen.create_topics import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicConfig,
)
from aiokafka.protocol._gen.create_topics import CreateTopicsRequest as _GeneratedRequest
from aiokafka.protocol._gen.create_topics import CreateTopicsResponse as _GeneratedResponse

__all__ = ["CreateTopicsRequest", "CreateTopicsResponse"]

#: aiokafka 0.14's tuple for one topic: ``(topic, num_partitions, replication_factor,
#: [(partition_id, [broker ids])], [(config_key, config_value)])``.
TopicTuple = tuple[str, int, int, Sequence[tuple[int, Sequence[int]]], Sequence[tuple[str, object]]]


class CreateTopicsResponse(_GeneratedResponse):
    """The generated response, with aiokafka 0.14's ``topic_errors`` view."""

    __slots__ = ()

    @property
    def topic_errors(self) -> list[tuple[str, int, str | None]]:
        """``(topic, error_code, error_message)`` for each topic, as aiokafka 0.14 reads
        them from CreateTopics v1 and later."""
        return [(t.name, t.error_code, t.error_message) for t in self.topics]

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview, version: int) -> CreateTopicsResponse:
        """Decode a body (no header) of ``version``."""
        plain = _GeneratedResponse.decode(data, version)
        return cls(plain.throttle_time_ms, plain.topics, plain.unknown_tagged_fields)


class CreateTopicsRequest(_GeneratedRequest):
    """``CreateTopicsRequest(create_topic_requests, timeout, validate_only)``, as in
    aiokafka 0.14.

    Args:
        create_topic_requests: One ``(topic, num_partitions, replication_factor,
            replica_assignment, configs)`` tuple per topic; ``replica_assignment`` is
            ``[(partition_id, [broker_id, ...]), ...]`` (empty lets the broker place the
            replicas), ``configs`` is ``[(name, value), ...]``. A value that is not a
            string or ``None`` is sent as ``str(value)`` (aiokafka 0.14 fails to encode
            it).
        timeout: Milliseconds the broker waits for the topics to be created.
        validate_only: Only validate the request; create nothing.
    """

    __slots__ = ()
    RESPONSE_TYPE = CreateTopicsResponse

    def __init__(
        self, create_topic_requests: Sequence[TopicTuple], timeout: int, validate_only: bool
    ) -> None:
        super().__init__(
            topics=[_topic(*entry) for entry in create_topic_requests],
            timeout_ms=timeout,
            validate_only=validate_only,
        )


def _topic(
    name: str,
    num_partitions: int,
    replication_factor: int,
    assignments: Sequence[tuple[int, Sequence[int]]],
    configs: Sequence[tuple[str, object]],
) -> CreatableTopic:
    return CreatableTopic(
        name=name,
        num_partitions=num_partitions,
        replication_factor=replication_factor,
        assignments=[
            CreatableReplicaAssignment(partition_index=p, broker_ids=list(ids))
            for p, ids in assignments
        ],
        configs=[
            CreatableTopicConfig(name=k, value=None if v is None else str(v)) for k, v in configs
        ],
    )
