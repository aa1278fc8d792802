"""Broker configuration (``server.properties``) and logging (``log4j2.properties``) files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .tls import TlsMaterial

#: Listener names the rig knows, with the security protocol of each.
SECURITY_PROTOCOLS = {
    "PLAINTEXT": "PLAINTEXT",
    "SASL_PLAINTEXT": "SASL_PLAINTEXT",
    "SSL": "SSL",
    "SASL_SSL": "SASL_SSL",
    "CONTROLLER": "PLAINTEXT",
    # rig.GssapiListener's Kerberos-only listener; its SASL settings come from the rig.
    "GSSAPI": "SASL_PLAINTEXT",
}

SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")

#: Users per SASL mechanism: (username, password). Distinct names per mechanism so a test
#: can tell which credential store answered.
DEFAULT_USERS: dict[str, tuple[str, str]] = {
    "PLAIN": ("plain-user", "plain-secret"),
    "SCRAM-SHA-256": ("scram256-user", "scram256-secret"),
    "SCRAM-SHA-512": ("scram512-user", "scram512-secret"),
}


#: The broker-side replica selector that honours a consumer's ``client.rack`` (KIP-392).
RACK_AWARE_SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


@dataclass(frozen=True)
class NodeSpec:
    """Everything needed to write one node's configuration."""

    node_id: int
    host: str
    ports: dict[str, int]
    """Listener name -> port; always has PLAINTEXT and CONTROLLER."""
    data_dir: Path
    rack: str | None = None
    """``broker.rack``; with a rack the broker also lets consumers fetch from the
    replica in their own rack (KIP-392's ``RackAwareReplicaSelector``)."""


def _java_escape(value: str) -> str:
    # .properties treats backslash as an escape; paths and JAAS strings must survive it.
    return value.replace("\\", "\\\\")


def server_properties(
    node: NodeSpec,
    voters: list[NodeSpec],
    *,
    auto_create_topics: bool,
    users: dict[str, tuple[str, str]],
    tls: TlsMaterial | None,
    extra: dict[str, str] | None = None,
) -> str:
    """Render ``server.properties`` for a combined broker/controller node.

    Args:
        node: The node being configured.
        voters: All controller-quorum members (static quorum), including ``node``.
        auto_create_topics: Value of ``auto.create.topics.enable``.
        users: SASL users by mechanism (only PLAIN users go into the JAAS config; SCRAM users
            are written to the metadata log at format time).
        tls: Certificates, required when ``node`` has an SSL or SASL_SSL listener.
        extra: Overrides and additions, applied last.
    """
    n = len(voters)
    listeners = ",".join(f"{name}://{node.host}:{port}" for name, port in node.ports.items())
    advertised = ",".join(
        f"{name}://{node.host}:{port}" for name, port in node.ports.items() if name != "CONTROLLER"
    )
    props: dict[str, str] = {
        "process.roles": "broker,controller",
        "node.id": str(node.node_id),
        "controller.quorum.voters": ",".join(
            f"{v.node_id}@{v.host}:{v.ports['CONTROLLER']}" for v in voters
        ),
        "controller.listener.names": "CONTROLLER",
        "listeners": listeners,
        "advertised.listeners": advertised,
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": ",".join(
            f"{name}:{SECURITY_PROTOCOLS[name]}" for name in node.ports
        ),
        "log.dirs": str(node.data_dir),
        # Small thread pools: up to four JVMs share two cores during a test run.
        "num.network.threads": "2",
        "num.io.threads": "4",
        "num.recovery.threads.per.data.dir": "1",
        "background.threads": "4",
        "num.partitions": "1",
        "default.replication.factor": "1",
        "auto.create.topics.enable": str(auto_create_topics).lower(),
        # Internal topics must fit the node count, or the first group/transaction use hangs.
        "offsets.topic.replication.factor": str(min(3, n)),
        "offsets.topic.num.partitions": "5",
        "transaction.state.log.replication.factor": str(min(3, n)),
        "transaction.state.log.min.isr": str(min(2, n)),
        "transaction.state.log.num.partitions": "5",
        "share.coordinator.state.topic.replication.factor": str(min(3, n)),
        "share.coordinator.state.topic.min.isr": str(min(2, n)),
        # Tests join groups constantly; waiting for more members only slows them down.
        "group.initial.rebalance.delay.ms": "0",
        "group.min.session.timeout.ms": "1000",
        "group.consumer.min.session.timeout.ms": "1000",
        "group.consumer.min.heartbeat.interval.ms": "500",
        # Share groups (KIP-932, on by default in 4.x): tests shorten record locks and
        # heartbeats per group, below the broker's default minimums (15 s, 5 s).
        "group.share.min.record.lock.duration.ms": "1000",
        "group.share.min.heartbeat.interval.ms": "500",
        "group.share.heartbeat.interval.ms": "1000",
        "group.share.min.session.timeout.ms": "6000",
        "group.share.session.timeout.ms": "10000",
        # A killed broker is fenced (and its leaderships moved) after this many ms.
        "broker.heartbeat.interval.ms": "1000",
        "broker.session.timeout.ms": "6000",
        "controlled.shutdown.enable": "true",
        "delete.topic.enable": "true",
    }
    if node.rack is not None:
        props["broker.rack"] = node.rack
        props["replica.selector.class"] = RACK_AWARE_SELECTOR
    sasl_listeners = [name for name in node.ports if name.startswith("SASL_")]
    if sasl_listeners:
        props["sasl.enabled.mechanisms"] = ",".join(SASL_MECHANISMS)
        # Enables delegation tokens (KIP-48): the key that signs their HMACs.
        props["delegation.token.secret.key"] = "rig-delegation-token-key"
        plain_user, plain_password = users["PLAIN"]
        for listener in sasl_listeners:
            prefix = f"listener.name.{listener.lower()}"
            props[f"{prefix}.sasl.enabled.mechanisms"] = ",".join(SASL_MECHANISMS)
            props[f"{prefix}.plain.sasl.jaas.config"] = (
                "org.apache.kafka.common.security.plain.PlainLoginModule required "
                f'user_{plain_user}="{plain_password}";'
            )
            for mech in ("scram-sha-256", "scram-sha-512"):
                props[f"{prefix}.{mech}.sasl.jaas.config"] = (
                    "org.apache.kafka.common.security.scram.ScramLoginModule required;"
                )
            # Unsecured JWS tokens (alg "none") are accepted by Kafka's default validator;
            # enough to exercise the OAUTHBEARER exchange without an identity provider.
            props[f"{prefix}.oauthbearer.sasl.jaas.config"] = (
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"
            )
    if any(SECURITY_PROTOCOLS[name].endswith("SSL") for name in node.ports):
        if tls is None:
            raise ValueError("tls material is required for SSL listeners")
        props.update(
            {
                "ssl.keystore.type": "PEM",
                "ssl.keystore.location": str(tls.keystore),
                "ssl.truststore.type": "PEM",
                "ssl.truststore.location": str(tls.truststore),
                "ssl.client.auth": "none",
                "ssl.endpoint.identification.algorithm": "https",
            }
        )
    props.update(extra or {})
    return "".join(f"{k}={_java_escape(v)}\n" for k, v in props.items())


def log4j2_properties(log_file: Path) -> str:
    """Log4j2 configuration writing everything at INFO to ``log_file``."""
    return (
        "status = warn\n"
        "appender.file.type = File\n"
        "appender.file.name = FILE\n"
        f"appender.file.fileName = {_java_escape(str(log_file))}\n"
        "appender.file.layout.type = PatternLayout\n"
        "appender.file.layout.pattern = [%d] %p %m (%c)%n\n"
        "rootLogger.level = INFO\n"
        "rootLogger.appenderRef.file.ref = FILE\n"
        # Per-request and per-segment chatter drowns the lines that explain a failure.
        "logger.state.name = state.change.logger\n"
        "logger.state.level = WARN\n"
        "logger.cleaner.name = kafka.log.LogCleaner\n"
        "logger.cleaner.level = WARN\n"
    )
