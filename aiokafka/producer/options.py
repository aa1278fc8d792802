"""``AIOKafkaProducer``'s constructor: its options turned into a config.

Split from :mod:`aiokafka.producer.producer` by responsibility. The signature (names,
types and defaults that ``inspect.signature()``, IDEs and mypy see) is generated from
the option table every client shares (``tools/codegen/options.py``); this base class
turns the options into a validated :class:`~aiokafka.producer.config.ProducerConfig`;
the producer sets up its state from that config in ``_setup``. The defaults repeat
``ProducerConfig``'s (``tests/unit/test_constructor_signatures.py`` keeps them
equal); ``acks``, ``enable_idempotence`` and ``delivery_timeout_ms`` default to
:data:`~aiokafka.options.RESOLVED`: the config derives them from the other options
(see its module docstring). The serializers bind the producer's key and value types
(``bytes`` without them), which ``send()`` then takes.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from aiokafka.options import reject_unknown
from aiokafka.structs import KT, VT

from ._gen_options import ProducerSignature

if TYPE_CHECKING:
    from .config import ProducerConfig

__all__ = ["OPTION_NAMES", "ProducerOptions"]


class ProducerOptions(ProducerSignature[KT, VT]):
    """The constructor of :class:`~aiokafka.producer.AIOKafkaProducer`: its signature
    is :class:`~aiokafka.producer._gen_options.ProducerSignature`'s."""

    def _take_options(self, options: dict[str, Any], unknown: Mapping[str, Any]) -> None:
        reject_unknown("AIOKafkaProducer", unknown, OPTION_NAMES)
        # Imported by the first constructor call for import cost (issue 14): the
        # config dataclasses (this one, ClientConfig) are costly to define.
        from .config import ProducerConfig

        self._setup(ProducerConfig.from_kwargs(**options))

    def _setup(self, config: ProducerConfig) -> None:
        raise NotImplementedError  # pragma: no cover - AIOKafkaProducer's


#: Every keyword option of ``AIOKafkaProducer``, ``loop`` included.
OPTION_NAMES = frozenset(
    name
    for name, p in inspect.signature(ProducerSignature.__init__).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY
)
