"""Names and behaviours that frameworks built on aiokafka 0.14 rely on.

Each test stands for a call site in such a framework (FastStream, the OpenTelemetry
instrumentation), written without importing it: only what that code does with the
aiokafka API.
"""

from __future__ import annotations

from typing import Any

import pytest

from aiokafka import AIOKafkaProducer


@pytest.mark.parametrize(
    "others",
    [{}, {"enable_idempotence": False}, {"enable_idempotence": True}, {"transactional_id": "t"}],
)
def test_producer_missing_acks_resolves_as_not_given(others: dict[str, Any]) -> None:
    # FastStream 0.7: ``from aiokafka.producer.producer import _missing`` and passes
    # ``acks=_missing`` on when its user set no acks. aiokafka 0.14 then picks acks
    # from enable_idempotence (-1 if idempotent, else 1); we resolve it from the same
    # options, as if acks were not given.
    from aiokafka.producer.producer import _missing

    passed = AIOKafkaProducer(acks=_missing, **others).config
    omitted = AIOKafkaProducer(**others).config
    assert passed.acks == omitted.acks
    assert passed.enable_idempotence == omitted.enable_idempotence
