"""``AIOKafkaConsumer``'s constructor: its options turned into a config.

Split from :mod:`aiokafka.consumer.consumer` by responsibility. The signature (names,
types and defaults that ``inspect.signature()``, IDEs and mypy see) is generated from
the option table every client shares (``tools/codegen/options.py``); this base class
turns the options into a validated :class:`~aiokafka.consumer.config.ConsumerConfig`;
the consumer itself sets up its state from that config in ``_setup``. The defaults
repeat ``ConsumerConfig``'s and ``ClientConfig``'s (``tests/unit/
test_constructor_signatures.py`` keeps them equal). The deserializers bind the
consumer's key and value types (``bytes`` without them), which reach
``ConsumerRecord.key`` / ``.value``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from aiokafka.options import reject_unknown
from aiokafka.structs import KT, VT

from ._gen_options import DEFAULT_ASSIGNORS, ConsumerSignature

if TYPE_CHECKING:
    from .config import ConsumerConfig

__all__ = ["DEFAULT_ASSIGNORS", "OPTION_NAMES", "ConsumerOptions"]


class ConsumerOptions(ConsumerSignature[KT, VT]):
    """The constructor of :class:`~aiokafka.consumer.AIOKafkaConsumer`: its signature
    is :class:`~aiokafka.consumer._gen_options.ConsumerSignature`'s."""

    def _take_options(
        self, options: dict[str, Any], unknown: Mapping[str, Any], topics: tuple[str, ...]
    ) -> None:
        reject_unknown("AIOKafkaConsumer", unknown, OPTION_NAMES)
        # Imported by the first constructor call for import cost (issue 14): the
        # config dataclasses (this one, ClientConfig) are costly to define.
        from .config import ConsumerConfig

        self._setup(ConsumerConfig.from_options(**options), topics)

    def _setup(self, config: ConsumerConfig, topics: tuple[str, ...]) -> None:
        raise NotImplementedError  # pragma: no cover - AIOKafkaConsumer's


#: Every keyword option of ``AIOKafkaConsumer``, ``loop`` included.
OPTION_NAMES = frozenset(
    name
    for name, p in inspect.signature(ConsumerSignature.__init__).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY
)
