"""The broker side of Kerberos: a rig listener that accepts only SASL GSSAPI."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["GSSAPI_LISTENER", "GssapiListener"]

#: Name of the rig's Kerberos listener (security protocol SASL_PLAINTEXT).
GSSAPI_LISTENER = "GSSAPI"


@dataclass(frozen=True)
class GssapiListener:
    """An extra listener ``GSSAPI`` (SASL_PLAINTEXT) that accepts only SASL GSSAPI.

    The KDC is the caller's (e.g. :class:`tools.kerberos.MiniKdc`); the broker logs in
    from ``keytab`` as ``principal`` with Java's ``Krb5LoginModule``.

    Attributes:
        keytab: The broker's service keytab.
        principal: Its principal, e.g. ``"kafka/localhost@AIOKAFKA.TEST"``; clients
            ask for ``service_name@<host part>``.
        krb5_conf: The realm's ``krb5.conf``, given to the JVM as
            ``java.security.krb5.conf``.
        service_name: ``sasl.kerberos.service.name``.
    """

    keytab: Path
    principal: str
    krb5_conf: Path
    service_name: str = "kafka"

    def server_properties(self) -> dict[str, str]:
        """The listener's ``server.properties`` entries."""
        jaas = (
            "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true "
            f'storeKey=true keyTab="{self.keytab}" principal="{self.principal}";'
        )
        prefix = f"listener.name.{GSSAPI_LISTENER.lower()}"
        return {
            f"{prefix}.sasl.enabled.mechanisms": "GSSAPI",
            f"{prefix}.gssapi.sasl.jaas.config": jaas,
            "sasl.kerberos.service.name": self.service_name,
        }
