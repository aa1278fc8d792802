"""aiokafka 0.14's import path of the consumer's ``GroupCoordinator`` (compatibility shim).

Tracing integrations written for aiokafka wrap ``GroupCoordinator.commit_offsets`` to
see every offset commit, and read the instance's ``group_id``: Datadog's ``ddtrace``
imports this module when it instruments aiokafka, and its whole aiokafka integration
failed to load without it. Here that name is the consumer's
:class:`~aiokafka.consumer.commits.Committer`, through whose ``commit_offsets`` every
commit goes. The rest of aiokafka 0.14's class (group membership) is not offered:
:class:`~aiokafka.AIOKafkaConsumer` and ``docs/migration-from-aiokafka.md`` say how
group membership works here.

faust-streaming 0.15 imports ``OffsetCommitRequest`` from here (aiokafka 0.14's module
imports it), for ``OffsetCommitRequest.DEFAULT_GENERATION_ID``; it is
:class:`aiokafka.protocol.commit.OffsetCommitRequest`.
"""

from __future__ import annotations

from aiokafka.protocol.commit import OffsetCommitRequest

from .commits import Committer as GroupCoordinator

__all__ = ["GroupCoordinator", "OffsetCommitRequest"]
