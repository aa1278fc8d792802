"""``AIOKafkaClient``'s constructor: its options turned into a config.

Split from :mod:`aiokafka.cluster.client` by responsibility, as the producer's and
consumer's are. The signature (names, types and ``ClientConfig``'s defaults, which
``tests/unit/test_constructor_signatures.py`` keeps equal) is generated from the
option table every client shares (``tools/codegen/options.py``); this base class
turns the options, or a ready :class:`~aiokafka.cluster.config.ClientConfig`, into
the config the client sets itself up from in ``_setup``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from aiokafka.options import reject_unknown

from ._gen_options import ClientSignature
from .config import ClientConfig, check_loop

__all__ = ["ClientOptions"]


class ClientOptions(ClientSignature):
    """The constructor of :class:`~aiokafka.cluster.AIOKafkaClient`: its signature is
    :class:`~aiokafka.cluster._gen_options.ClientSignature`'s."""

    def _take_options(
        self, options: dict[str, Any], unknown: Mapping[str, Any], config: ClientConfig | None
    ) -> None:
        reject_unknown("AIOKafkaClient", unknown, _OPTION_DEFAULTS)
        # stacklevel 3: the warning points at the line that made the client.
        check_loop(options.pop("loop"), "AIOKafkaClient", stacklevel=3)
        if config is not None:
            if any(options[name] != _OPTION_DEFAULTS[name] for name in options):
                raise TypeError("pass either config or keyword options, not both")
            self._setup(config)
        else:
            self._setup(ClientConfig(**options))

    def _setup(self, config: ClientConfig) -> None:
        raise NotImplementedError  # pragma: no cover - AIOKafkaClient's

    config: ClientConfig  # set by _setup


# Each keyword option's default, from the signature (``loop`` included): the options
# passed beside a ``config`` are those that differ from it.
_OPTION_DEFAULTS = {
    name: p.default
    for name, p in inspect.signature(ClientSignature.__init__).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY
}
