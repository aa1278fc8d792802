"""The public hook instrumentation adapters use to wrap a client's operations.

Tracing (:mod:`aiokafka.otel`) needs to run code around ``send()``, ``getmany()``,
``commit()`` and the like. A client offers that through
:meth:`Instrumentable.set_instrumentation`: each wrapper replaces one of the client's
public methods *on that instance only* (an instance attribute shadows the class's
function), so a client nobody instrumented runs exactly the code it runs without this
module, with no check per call. ``async for`` cannot be wrapped that way (Python looks
``__aiter__``/``__anext__`` up on the type), so the consumer's ``__aiter__`` asks for
the iteration wrapper: once per loop, not per record.

Nothing here imports an instrumentation library.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from functools import partial
from typing import Any
from weakref import ref

__all__ = ["Instrumentable", "IterationWrapper", "OperationWrapper"]

#: ``wrapper(operation, *args, **kwargs)``: called instead of the client's method with
#: the original (bound) method first; returns what the method returns.
OperationWrapper = Callable[..., Any]

#: ``wrapper(iterator)``: the async iterator ``async for`` uses instead of the client
#: itself; it gets its records from ``iterator.__anext__()``.
IterationWrapper = Callable[[AsyncIterator[Any]], AsyncIterator[Any]]


class Instrumentable:
    """Mixin of the client facades: wrapping of their public methods per instance."""

    # The class default: no instance attribute until a client is instrumented.
    _iteration_wrapper: IterationWrapper | None = None

    def set_instrumentation(
        self,
        wrappers: Mapping[str, OperationWrapper] | None,
        iteration: IterationWrapper | None = None,
    ) -> None:
        """Route this client's operations through ``wrappers`` (``None``: remove them).

        Replaces whatever an earlier call installed. Meant for instrumentation
        adapters such as :func:`aiokafka.otel.instrument`, not for application code.

        Args:
            wrappers: ``{method name: wrapper}``; each ``wrapper(operation, *args,
                **kwargs)`` is called instead of the method, with the original bound
                method as ``operation``.
            iteration: For a consumer, wraps what ``async for`` iterates over.

        Raises:
            ValueError: a name is not a public method of the client.
        """
        cls = type(self)
        for name in wrappers or ():
            if not _is_wrapper(cls, name):
                raise ValueError(f"wrappers: {name!r} is not a public method of {cls.__name__}")
        if iteration is not None and not hasattr(cls, "__aiter__"):
            raise ValueError("iteration: this client is not iterable")
        attributes = vars(self)
        for name in [name for name in attributes if _is_wrapper(cls, name)]:
            del attributes[name]
        attributes.pop("_iteration_wrapper", None)
        for name, wrapper in (wrappers or {}).items():
            # The client is held weakly: a strong reference from its own __dict__ would
            # be a cycle, and a client dropped without stop() would wait for the cyclic
            # collector before its __del__ releases what it left running.
            attributes[name] = partial(_call_wrapper, wrapper, getattr(cls, name), ref(self))
        if iteration is not None:
            self._iteration_wrapper = iteration

    @property
    def instrumented(self) -> bool:
        """Whether :meth:`set_instrumentation` installed wrappers on this client."""
        cls = type(self)
        return any(name == "_iteration_wrapper" or _is_wrapper(cls, name) for name in vars(self))


def _call_wrapper(
    wrapper: OperationWrapper,
    function: Callable[..., Any],
    client: ref[Instrumentable],
    /,
    *args: Any,
    **kwargs: Any,
) -> Any:
    # Called as the client's method, so the client is alive: hand the wrapper the
    # class's method bound to it.
    instance = client()
    return wrapper(function.__get__(instance, type(instance)), *args, **kwargs)


def _is_wrapper(cls: type, name: str) -> bool:
    # Whether ``name`` is a public method of ``cls``. An instance attribute of that
    # name is a wrapper: the facades keep their own state in "_" names.
    return not name.startswith("_") and callable(getattr(cls, name, None))
