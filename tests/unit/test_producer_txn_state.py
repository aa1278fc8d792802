"""The transaction state machine (pure): legal paths, illegal calls, error kinds."""

from __future__ import annotations

from typing import Any

import pytest

from aiokafka.errors import (
    ConcurrentTransactions,
    IllegalStateError,
    KafkaTimeoutError,
    ProducerFenced,
    TopicAuthorizationFailedError,
    TransactionAbortableError,
    TransactionAbortedError,
    TransactionErrorKind,
    transaction_error_kind,
)
from aiokafka.producer.accumulator import RecordAccumulator
from aiokafka.producer.idempotence import ProducerIdState
from aiokafka.producer.sender import Sender
from aiokafka.producer.transactions import TransactionManager
from aiokafka.producer.txn_state import TxnState, TxnStateMachine
from aiokafka.protocol._gen.add_partitions_to_txn import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnTopicResult,
)
from aiokafka.protocol._gen.produce import (
    LeaderIdAndEpoch,
    PartitionProduceResponse,
    ProduceResponse,
    TopicProduceResponse,
)
from aiokafka.structs import TopicPartition

from ._producer_stub import StubClient, send_one_in_transaction, transactional_sender

TP0 = TopicPartition("t", 0)
TP1 = TopicPartition("t", 1)


def ready() -> TxnStateMachine:
    sm = TxnStateMachine()
    sm.begin_init()
    sm.init_done()
    return sm


def test_commit_and_abort_paths() -> None:
    sm = ready()
    assert sm.state is TxnState.READY
    sm.begin()
    sm.check_send()
    sm.check_offsets()
    assert sm.maybe_add([TP0, TP1])
    assert not sm.maybe_add([TP0])
    assert not sm.is_added(TP0)
    sm.partitions_added([TP0])
    assert sm.is_added(TP0) and sm.pending == {TP1}
    assert sm.begin_commit() is True
    assert sm.begin_commit() is False  # a retry of the same commit
    sm.check_commit_ok()
    sm.end_done()
    assert sm.state is TxnState.READY
    assert not sm.added and not sm.pending and not sm.has_data
    sm.begin()
    sm.groups.add("g")
    assert sm.has_data
    sm.begin_abort()
    sm.begin_abort()  # a retry after a timeout
    sm.end_done()
    assert sm.state is TxnState.READY and not sm.groups


@pytest.mark.parametrize(
    ("setup", "call", "match"),
    [
        ([], "check_send", "start"),
        ([], "begin", "ready"),
        (["init"], "check_send", "begin_transaction"),
        (["init"], "begin_commit", "commit_transaction"),
        (["init"], "begin_abort", "abort_transaction"),
        (["init"], "check_offsets", "send_offsets_to_transaction"),
        (["init", "begin"], "begin", "already open"),
        (["init", "begin", "commit"], "begin_abort", "commit is in progress"),
        (["init", "begin", "commit"], "check_send", "send"),
        (["init", "begin", "abort"], "check_send", "send"),
        (["init", "begin", "abort"], "begin_commit", "commit_transaction"),
    ],
)
def test_illegal_transitions(setup: list[str], call: str, match: str) -> None:
    sm = TxnStateMachine()

    def init() -> None:
        sm.begin_init()
        sm.init_done()

    steps = {
        "init": init,
        "begin": sm.begin,
        "commit": sm.begin_commit,
        "abort": sm.begin_abort,
    }
    for step in setup:
        steps[step]()
    before = sm.state
    with pytest.raises(IllegalStateError, match=match):
        getattr(sm, call)()
    assert sm.state is before


def test_fatal_error_is_final_and_raised_by_every_call() -> None:
    sm = ready()
    sm.begin()
    fenced = ProducerFenced("fenced")
    sm.set_error(fenced)
    assert sm.state is TxnState.FATAL_ERROR
    for call in (sm.begin, sm.begin_commit, sm.begin_abort, sm.check_send, sm.check_offsets):
        with pytest.raises(ProducerFenced) as info:
            call()
        assert info.value is fenced
    with pytest.raises(ProducerFenced):
        sm.begin_init()
    # A later abortable error does not hide the fatal one.
    sm.set_abortable(TopicAuthorizationFailedError())
    assert sm.state is TxnState.FATAL_ERROR


def test_abortable_error_needs_an_abort() -> None:
    sm = ready()
    sm.begin()
    cause = TopicAuthorizationFailedError("no")
    sm.set_error(cause)
    assert sm.state is TxnState.ABORTABLE_ERROR
    for call in (sm.begin_commit, sm.check_send, sm.check_offsets, sm.begin):
        with pytest.raises(TransactionAbortableError) as info:
            call()
        assert info.value.__cause__ is cause
        assert transaction_error_kind(info.value) is TransactionErrorKind.ABORTABLE
    # The first error is kept.
    sm.set_abortable(KafkaTimeoutError())
    assert sm.abortable_error is cause
    sm.begin_abort()
    sm.end_done()
    assert sm.abortable_error is None
    sm.begin()  # a new transaction may begin
    sm.check_send()


def test_error_during_commit_makes_it_abortable() -> None:
    sm = ready()
    sm.begin()
    sm.begin_commit()
    sm.set_error(KafkaTimeoutError("batch expired"))
    with pytest.raises(TransactionAbortableError):
        sm.check_commit_ok()
    sm.begin_abort()
    assert sm.state is TxnState.ABORTING
    # Errors while aborting change nothing: the transaction ends anyway.
    sm.set_abortable(KafkaTimeoutError())
    assert sm.state is TxnState.ABORTING


def test_error_kinds() -> None:
    assert transaction_error_kind(ConcurrentTransactions) is TransactionErrorKind.RETRIABLE
    assert transaction_error_kind(ProducerFenced) is TransactionErrorKind.FATAL
    assert transaction_error_kind(TransactionAbortableError) is TransactionErrorKind.ABORTABLE
    # Every error says its kind itself, too.
    assert ConcurrentTransactions().transaction_kind is TransactionErrorKind.RETRIABLE
    assert ProducerFenced("x").transaction_kind is TransactionErrorKind.FATAL
    assert TransactionAbortableError().transaction_kind is TransactionErrorKind.ABORTABLE


# -- the sender with a transaction (scripted stand-in for the cluster client) -----------


class TxnClient(StubClient):
    """Records the order of requests; AddPartitionsToTxn answers with ``add_error``."""

    def __init__(self, add_error: int = 0) -> None:
        super().__init__()
        self.add_error = add_error
        self.log: list[str] = []

    async def api_version(self, node: Any, api_key: int, max_version: int | None = None) -> int:
        return 3

    async def send(self, node: Any, request: Any, **kw: Any) -> Any:
        name = type(request).__name__
        self.log.append(name)
        if name == "AddPartitionsToTxnRequest":
            assert kw.get("max_version") == 3  # v4+ are broker-to-broker
            results = [
                AddPartitionsToTxnPartitionResult(
                    partition_index=p, partition_error_code=self.add_error
                )
                for t in request.v3_and_below_topics
                for p in t.partitions
            ]
            return AddPartitionsToTxnResponse(
                results_by_topic_v3_and_below=[
                    AddPartitionsToTxnTopicResult(name="t", results_by_partition=results)
                ]
            )
        assert name == "ProduceRequest"
        assert request.transactional_id == "tid"
        part = PartitionProduceResponse(index=0, base_offset=7, current_leader=LeaderIdAndEpoch())
        return ProduceResponse(
            responses=[TopicProduceResponse(name="t", partition_responses=[part])]
        )


async def start_txn_sender(client: TxnClient) -> tuple[Sender, RecordAccumulator, Any]:
    ids = ProducerIdState("tid")
    ids.set_producer_id(5, 0)
    txn = TransactionManager(client, ids, "tid", 60000, 1000)
    txn.state.begin_init()
    txn.state.init_done()
    sender, acc = transactional_sender(client, ids, txn)
    return sender, acc, txn


async def test_sender_adds_the_partition_before_its_first_batch() -> None:
    client = TxnClient()
    sender, acc, txn = await start_txn_sender(client)
    meta = await send_one_in_transaction(sender, acc, txn)
    assert meta.offset == 7
    assert client.log == ["AddPartitionsToTxnRequest", "ProduceRequest"]
    assert txn.state.is_added(TP0)


async def test_partition_that_cannot_be_added_is_never_sent_and_aborts() -> None:
    client = TxnClient(add_error=TopicAuthorizationFailedError.errno)
    sender, acc, txn = await start_txn_sender(client)
    with pytest.raises(TransactionAbortedError) as info:
        await send_one_in_transaction(sender, acc, txn)
    assert isinstance(info.value.__cause__, TopicAuthorizationFailedError)
    assert "ProduceRequest" not in client.log
    assert txn.state.state is TxnState.ABORTABLE_ERROR
