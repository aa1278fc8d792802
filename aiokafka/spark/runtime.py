"""Event loops and clients inside Spark's Python processes.

Spark calls the data source synchronously, from planner processes (the driver side:
offsets, partitions, commits) and from reused Python workers (the tasks). The
driver-side stream reader keeps one loop and one admin client for the life of the
query (``stop()`` closes them), because it is asked for offsets every trigger.

A Python worker runs its tasks one after the other on one event loop of its own
(:func:`worker_runtime`, made on first use, after Spark forked the worker) and keeps the
started consumers and plain producers of tasks that ended cleanly in a
:class:`ClientPool`, for its next tasks with the same options: a streaming query's
micro-batches then do not each pay a client start (bootstrap, metadata, a connection
to the leader, InitProducerId), as Spark's JVM connector keeps pooled consumers and
cached producers. A client is never shared by two tasks; one of a task that failed or
was abandoned is closed, not kept; one idle for :data:`IDLE_CLIENT_S` is closed when
next looked at. Between tasks the loop does not run, so pooled clients do nothing (a
consumer is left with every partition paused). Transactional producers are not
pooled. Nothing here is pickled: objects that Spark ships hold only options and create
these on first use.

Each client class is imported when the first one is made: a Python worker that only
reads never imports the producer or the admin client (the admin client alone takes
most of a second to import on a loaded machine, paid by every new worker).

PySpark's daemon runs a full ``gc.collect()`` in a reused Python process after every
call it serves: after each task in a worker, and after each micro-batch's writer
creation and commit in the planner processes. With pyspark, pyarrow and this client
loaded that is 40-50 ms of CPU per task worker and 20-30 ms per planner process, per
micro-batch, measured at trigger 0 (some 140 ms of CPU per micro-batch on a 2-core
machine, and a worker takes no task until it is done). :func:`freeze_long_lived`
moves what a process holds once it has served a first call (modules, pooled clients,
the loop) to the collector's permanent generation, which those collections skip.
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import os
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from aiokafka._timeout import wait_for

from .kafka_options import build_ssl_context

if TYPE_CHECKING:
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.consumer import AIOKafkaConsumer
    from aiokafka.producer import AIOKafkaProducer

T = TypeVar("T")
C = TypeVar("C")

# Bounded clean-up: closing a client must not hang a Spark task that already failed.
CLOSE_TIMEOUT_S = 10.0

#: A pooled client left unused this long is closed instead of reused: well within the
#: broker's connections.max.idle.ms (10 min), so a reused client rarely finds its
#: connections closed (and reconnects when it does). PySpark itself ends a Python
#: worker idle for a minute.
IDLE_CLIENT_S = 60.0

#: Idle clients kept per options (a worker runs one task at a time: one is enough).
MAX_IDLE_PER_KEY = 1


#: Set by PySpark in the environment of the Python processes it reuses between calls
#: (``spark.python.worker.reuse``, the default), whose daemon collects after each call.
REUSED_WORKER_ENV = "SPARK_REUSE_WORKER"

_CALLS: dict[tuple[int, str], int] = {}


def freeze_long_lived(role: str) -> None:
    """Call at the start of each call of ``role`` (read task, write task, ...): at the
    second one in this process, freeze what the process holds (``gc.freeze``), so that
    the full collection PySpark's daemon runs after every call skips it from then on
    (see the module docstring).

    Only in a process PySpark reuses (elsewhere, e.g. in a test or a driver, nothing
    is done). By the second call the first has loaded what the role needs (modules,
    pooled clients, and whatever PySpark itself loads after a call returns), and the
    daemon has just collected that call's garbage: what is left lives on. Freezing
    is O(1) (a list splice). The cost: a frozen object that later becomes garbage in
    a reference cycle is not freed (a pooled client closed after being idle, at most
    once per client); its memory goes with the process.
    """
    if not os.environ.get(REUSED_WORKER_ENV):
        return
    key = (os.getpid(), role)
    calls = _CALLS.get(key, 0) + 1
    _CALLS[key] = calls
    if calls == 2:
        gc.freeze()


class PrivateLoop:
    """An event loop owned by one task (or by the driver-side reader) and run with
    :meth:`run`; :meth:`close` finishes async generators and closes it."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` to completion on this loop."""
        return self._loop.run_until_complete(coro)

    def close(self) -> None:
        """Close the loop (idempotent)."""
        if self._loop.is_closed():
            return
        try:
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        finally:
            self._loop.close()


class ClientPool(Generic[C]):
    """Started clients of one kind kept by a worker between its tasks, by options.

    Runs on :func:`worker_loop`. :meth:`take` hands out an idle client with the same
    options (or starts a new one); :meth:`give_back` keeps it for the next task
    (only a client whose task ended cleanly: the caller closes the others).
    """

    def __init__(
        self,
        make: Callable[[dict[str, Any], dict[str, str]], C],
        start: Callable[[C], Awaitable[Any]],
        close: Callable[[C], Coroutine[Any, Any, Any]],
    ) -> None:
        self._make = make
        self._start = start
        self._close = close
        self._idle: dict[str, list[tuple[float, C]]] = {}

    @staticmethod
    def key(kwargs: dict[str, Any], ssl_opts: dict[str, str]) -> str:
        """The options as a pool key (values are plain str/int/bool/float)."""
        return repr((sorted(kwargs.items()), sorted(ssl_opts.items())))

    async def take(self, kwargs: dict[str, Any], ssl_opts: dict[str, str]) -> C:
        """An idle started client with these options, else a new started one."""
        idle = self._idle.get(self.key(kwargs, ssl_opts), [])
        while idle:
            since, client = idle.pop()
            if time.monotonic() - since < IDLE_CLIENT_S:
                return client
            await close_quietly(self._close(client))
        client = self._make(kwargs, ssl_opts)
        try:
            await self._start(client)
        except BaseException:
            await close_quietly(self._close(client))
            raise
        return client

    async def give_back(self, kwargs: dict[str, Any], ssl_opts: dict[str, str], client: C) -> None:
        """Keep ``client`` (started, with nothing in flight) for a later task."""
        idle = self._idle.setdefault(self.key(kwargs, ssl_opts), [])
        idle.append((time.monotonic(), client))
        while len(idle) > MAX_IDLE_PER_KEY:
            await close_quietly(self._close(idle.pop(0)[1]))

    def __len__(self) -> int:
        """How many idle clients the pool holds."""
        return sum(len(clients) for clients in self._idle.values())

    async def close_all(self) -> None:
        """Close every idle client (bounded each)."""
        idle = [client for clients in self._idle.values() for _, client in clients]
        self._idle.clear()
        for client in idle:
            await close_quietly(self._close(client))


def _with_ssl(kwargs: dict[str, Any], ssl_opts: dict[str, str]) -> dict[str, Any]:
    context = build_ssl_context(ssl_opts, str(kwargs.get("security_protocol", "PLAINTEXT")))
    return kwargs if context is None else {**kwargs, "ssl_context": context}


def new_consumer(kwargs: dict[str, Any], ssl_opts: dict[str, str]) -> AIOKafkaConsumer[Any, Any]:
    """A consumer (not started) from parsed options; call inside the loop that runs it."""
    from aiokafka.consumer import AIOKafkaConsumer

    return AIOKafkaConsumer(**_with_ssl(kwargs, ssl_opts))


def new_producer(
    kwargs: dict[str, Any], ssl_opts: dict[str, str], **extra: Any
) -> AIOKafkaProducer:
    """A producer (not started) from parsed options plus ``extra`` keyword arguments."""
    from aiokafka.producer import AIOKafkaProducer

    return AIOKafkaProducer(**_with_ssl({**kwargs, **extra}, ssl_opts))


def new_admin(kwargs: dict[str, Any], ssl_opts: dict[str, str]) -> AIOKafkaAdminClient:
    """An admin client (not started) from a consumer's or producer's parsed options:
    only the options every client shares are kept."""
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.admin.config import ADMIN_OPTIONS

    shared = {k: v for k, v in kwargs.items() if k in ADMIN_OPTIONS}
    return AIOKafkaAdminClient(**_with_ssl(shared, ssl_opts))


async def close_quietly(closer: Coroutine[Any, Any, Any]) -> None:
    """Await a client's ``stop()``/``close()`` within :data:`CLOSE_TIMEOUT_S`.

    Used on the failure path only, where the task's own error is the one to report;
    a timeout here is not raised over it. Cancellation still propagates.
    """
    try:
        await wait_for(closer, CLOSE_TIMEOUT_S)
    except asyncio.CancelledError:
        raise
    except Exception:
        return


def _start_consumer(consumer: AIOKafkaConsumer[Any, Any]) -> Awaitable[None]:
    return consumer.start()


def _stop_consumer(consumer: AIOKafkaConsumer[Any, Any]) -> Coroutine[Any, Any, None]:
    return consumer.stop()


def _start_producer(producer: AIOKafkaProducer) -> Awaitable[None]:
    return producer.start()


def _stop_producer(producer: AIOKafkaProducer) -> Coroutine[Any, Any, None]:
    return producer.stop()


class WorkerRuntime:
    """What a Python worker keeps between its tasks: one event loop (never closed:
    the pooled clients live on it), the idle task consumers and the idle plain
    (non-transactional) task producers."""

    def __init__(self) -> None:
        self.loop = PrivateLoop()
        self.consumers: ClientPool[AIOKafkaConsumer[Any, Any]] = ClientPool(
            new_consumer, _start_consumer, _stop_consumer
        )
        self.producers: ClientPool[AIOKafkaProducer] = ClientPool(
            new_producer, _start_producer, _stop_producer
        )

    def close(self) -> None:
        """Close the pooled clients and the loop (at interpreter exit; Spark ending a
        worker with ``os._exit`` skips this, and the broker sees the connections drop)."""
        try:
            self.loop.run(self._close_pools())
        finally:
            self.loop.close()

    async def _close_pools(self) -> None:
        await self.consumers.close_all()
        await self.producers.close_all()


_WORKER: tuple[int, WorkerRuntime] | None = None


def worker_runtime() -> WorkerRuntime:
    """This process's :class:`WorkerRuntime`, made on first use in each process (a
    worker forked by Spark never inherits its parent's loop or clients)."""
    global _WORKER
    pid = os.getpid()
    if _WORKER is None or _WORKER[0] != pid:
        runtime = WorkerRuntime()
        atexit.register(_close_at_exit, pid, runtime)
        _WORKER = (pid, runtime)
    return _WORKER[1]


def _close_at_exit(pid: int, runtime: WorkerRuntime) -> None:
    if os.getpid() == pid:  # not in a forked child that inherited the hook
        runtime.close()
