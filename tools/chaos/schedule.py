"""The chaos scenario's settings and its fault schedule, derived from a seed (pure).

The same seed gives the same faults at the same offsets with the same hold times; what a
fault hits at run time can still depend on the cluster (``kill-leader`` kills whichever
broker leads the chosen partition at that moment).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

#: Faults on the brokers and the network (one at a time, the cluster healed in between).
CLUSTER_KINDS = ("kill-leader", "pause", "cut", "stall")
#: Faults on the client processes (run alongside the cluster faults).
CLIENT_KINDS = ("kill-member", "kill-eos")


@dataclass(frozen=True)
class Scenario:
    """What one chaos run does.

    Args:
        seed: Seed of the fault schedule.
        cluster_faults: Broker/network faults (kinds in :data:`CLUSTER_KINDS`, about
            equally many of each).
        member_kills: SIGKILLs of consumer-group members (each restarted).
        eos_kills: SIGKILLs of the transactional consume-process-produce process.
        spacing: Seconds between the planned starts of consecutive cluster faults.
        warmup: Seconds of traffic before the first fault.
        cooldown: Seconds of traffic after the last fault healed.
        rate: Records per second of the idempotent producer.
        partitions: Partitions of the data topic (and of the transactional output).
        members: Consumer-group members.
        max_ack_gap: Bound on the longest wait between two acknowledgements of one
            partition, in seconds (a longer one is a violation: a stalled producer).
    """

    seed: int = 1
    cluster_faults: int = 20
    member_kills: int = 6
    eos_kills: int = 4
    spacing: float = 11.0
    warmup: float = 10.0
    cooldown: float = 15.0
    rate: float = 500.0
    partitions: int = 4
    members: int = 2
    max_ack_gap: float = 30.0

    @classmethod
    def short(cls, seed: int = 1) -> Scenario:
        """The version inside ``make test``: one fault of each kind, about a minute."""
        return cls(
            seed=seed,
            cluster_faults=4,
            member_kills=1,
            eos_kills=1,
            spacing=10.0,
            warmup=8.0,
            cooldown=8.0,
            rate=300.0,
        )


@dataclass(frozen=True)
class Fault:
    """One planned fault.

    Attributes:
        at: Seconds after the start of traffic when it begins (later if the previous
            fault of its timeline is still running).
        kind: One of :data:`CLUSTER_KINDS` or :data:`CLIENT_KINDS`.
        target: The partition whose leader is killed (``kill-leader``), the node id
            (``pause``, ``cut``, ``stall``) or the member index (``kill-member``).
        hold: Seconds the fault lasts before recovery: the node stays down or paused, the
            proxy refuses or stalls, the killed process stays dead.
    """

    at: float
    kind: str
    target: int
    hold: float

    def describe(self) -> str:
        where = {
            "kill-leader": f"leader of partition {self.target}",
            "pause": f"node {self.target}",
            "cut": f"proxy of node {self.target}",
            "stall": f"proxy of node {self.target}",
            "kill-member": f"member {self.target}",
            "kill-eos": "transactional process",
        }[self.kind]
        return f"t={self.at:6.1f}s {self.kind:<11} {where:<24} hold {self.hold:4.1f}s"


# Hold ranges (seconds) per kind. Pauses straddle the brokers' 6 s session timeout, so
# some paused brokers are fenced and lose their leaderships and some are not; stalls stay
# below the producer's 40 s request timeout but well above a few round trips.
_HOLDS = {
    "kill-leader": (2.0, 8.0),
    "pause": (2.0, 9.0),
    "cut": (0.5, 4.0),
    "stall": (3.0, 12.0),
    "kill-member": (1.0, 5.0),
    "kill-eos": (1.0, 5.0),
}


def _spread(rng: random.Random, count: int, start: float, span: float) -> list[float]:
    """``count`` times in ``[start, start + span)``, one per equal slot, jittered."""
    slot = span / count if count else 0.0
    return [start + i * slot + rng.uniform(0.0, 0.3 * slot) for i in range(count)]


def make_schedule(scenario: Scenario, nodes: int = 3) -> list[Fault]:
    """Cluster and client faults of ``scenario``, ordered by start time."""
    rng = random.Random(scenario.seed)
    kinds = [CLUSTER_KINDS[i % len(CLUSTER_KINDS)] for i in range(scenario.cluster_faults)]
    rng.shuffle(kinds)
    span = scenario.cluster_faults * scenario.spacing
    faults = []
    for at, kind in zip(_spread(rng, len(kinds), scenario.warmup, span), kinds, strict=True):
        target = (
            rng.randrange(scenario.partitions) if kind == "kill-leader" else rng.randint(1, nodes)
        )
        faults.append(Fault(round(at, 1), kind, target, round(rng.uniform(*_HOLDS[kind]), 1)))
    client = ["kill-member"] * scenario.member_kills + ["kill-eos"] * scenario.eos_kills
    rng.shuffle(client)
    # Offset by half a slot so client kills tend to fall between cluster faults, not on them.
    offset = scenario.warmup + (span / len(client) / 2 if client else 0.0)
    for at, kind in zip(_spread(rng, len(client), offset, span), client, strict=True):
        target = rng.randrange(scenario.members) if kind == "kill-member" else 0
        faults.append(Fault(round(at, 1), kind, target, round(rng.uniform(*_HOLDS[kind]), 1)))
    return sorted(faults, key=lambda f: f.at)


def is_cluster_fault(fault: Fault) -> bool:
    """Whether ``fault`` hits the brokers or the network (else a client process)."""
    return fault.kind in CLUSTER_KINDS
