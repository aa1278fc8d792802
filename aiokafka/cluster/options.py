"""``AIOKafkaClient``'s constructor: every option as a typed keyword parameter.

Split from :mod:`aiokafka.cluster.client` by responsibility, as the producer's and
consumer's are: this base class owns the signature (names, types and
``ClientConfig``'s defaults, which ``tests/unit/test_constructor_signatures.py`` keeps
equal) and turns it, or a ready :class:`~aiokafka.cluster.config.ClientConfig`, into
the config the client sets itself up from in ``_setup``.
"""

from __future__ import annotations

import asyncio
import inspect
import ssl
from collections.abc import Sequence

from typing_extensions import Never

from aiokafka.abc import AbstractTokenProvider
from aiokafka.net.frames import DEFAULT_MAX_RESPONSE_SIZE
from aiokafka.net.secret import Secret
from aiokafka.option_checks import DEFAULT_CLIENT_ID
from aiokafka.options import given, reject_unknown

from .config import ClientConfig, check_loop

__all__ = ["ClientOptions"]


class ClientOptions:
    """The constructor of :class:`~aiokafka.cluster.AIOKafkaClient`."""

    def __init__(
        self,
        config: ClientConfig | None = None,
        *,
        loop: asyncio.AbstractEventLoop | None = None,
        bootstrap_servers: str | Sequence[str] = "localhost",
        client_id: str | None = DEFAULT_CLIENT_ID,
        metadata_max_age_ms: int = 300000,
        request_timeout_ms: int = 40000,
        retry_backoff_ms: int = 100,
        reconnect_backoff_ms: int = 50,
        reconnect_backoff_max_ms: int = 1000,
        connections_max_idle_ms: int = 540000,
        max_in_flight_requests_per_connection: int = 5,
        api_version: str | None = "auto",
        security_protocol: str = "PLAINTEXT",
        ssl_context: ssl.SSLContext | None = None,
        sasl_mechanism: str = "PLAIN",
        sasl_plain_username: str | None = None,
        sasl_plain_password: str | Secret | None = None,
        sasl_kerberos_service_name: str = "kafka",
        sasl_kerberos_domain_name: str | None = None,
        sasl_oauth_token_provider: AbstractTokenProvider | None = None,
        client_rack: str | None = None,
        allow_auto_topic_creation: bool = True,
        max_response_size: int = DEFAULT_MAX_RESPONSE_SIZE,
        enable_metrics_push: bool = True,
        **configs: Never,
    ) -> None:
        """Validate the options; nothing connects before :meth:`start`.

        Options are keyword-only, with aiokafka 0.14's names and defaults (see
        :class:`~aiokafka.cluster.config.ClientConfig` for each one's meaning).

        Args:
            config: A validated config instead of the keyword options.
            loop: Deprecated and ignored (a ``DeprecationWarning``).
            bootstrap_servers: ``"host:port[,host:port]"`` or a list of them.
            client_id: Sent in request headers (broker logs, quotas).
            metadata_max_age_ms: Refresh metadata at least this often.
            request_timeout_ms: Deadline of one request, and of connecting.
            retry_backoff_ms: Pause between retries of a failed request.
            reconnect_backoff_ms: First pause before reconnecting to a broker.
            reconnect_backoff_max_ms: Bound of the growing reconnect pause.
            connections_max_idle_ms: Close connections idle for longer.
            max_in_flight_requests_per_connection: Pipelining depth per connection.
            api_version: Accepted for aiokafka and ignored (versions are negotiated).
            security_protocol: ``PLAINTEXT``, ``SSL``, ``SASL_PLAINTEXT`` or ``SASL_SSL``.
            ssl_context: Required for the SSL protocols.
            sasl_mechanism: ``PLAIN``, ``SCRAM-SHA-256/512``, ``OAUTHBEARER``, ``GSSAPI``.
            sasl_plain_username: User for PLAIN/SCRAM.
            sasl_plain_password: Password for PLAIN/SCRAM (kept as a ``Secret``).
            sasl_kerberos_service_name: Kerberos service name (GSSAPI).
            sasl_kerberos_domain_name: Kerberos host name override (GSSAPI).
            sasl_oauth_token_provider: Token provider (OAUTHBEARER).
            client_rack: The client's rack.
            allow_auto_topic_creation: Let Metadata requests create missing topics.
            max_response_size: Largest response frame accepted from a broker.
            enable_metrics_push: Push metrics when the cluster subscribes (KIP-714).
            **configs: Nothing else: an unknown name raises.

        Raises:
            aiokafka.option_checks.InvalidOptionError: an unknown option (with the
                closest valid name) or a value of the wrong type; both a
                ``TypeError`` and a ``ValueError``.
            ValueError: a value out of range (names it).
            TypeError: both ``config`` and keyword options.
        """
        options = given(locals())
        reject_unknown("AIOKafkaClient", configs, _OPTION_DEFAULTS)
        check_loop(options.pop("loop"), "AIOKafkaClient")
        if config is not None:
            if any(options[name] != _OPTION_DEFAULTS[name] for name in options):
                raise TypeError("pass either config or keyword options, not both")
            self._setup(config)
        else:
            self._setup(ClientConfig(**options))

    def _setup(self, config: ClientConfig) -> None:
        raise NotImplementedError  # pragma: no cover - AIOKafkaClient's


# Each keyword option's default, from the signature (``loop`` included): the options
# passed beside a ``config`` are those that differ from it.
_OPTION_DEFAULTS = {
    name: p.default
    for name, p in inspect.signature(ClientOptions.__init__).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY
}
