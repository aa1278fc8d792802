"""API version negotiation (KIP-35/KIP-511), without I/O.

After the ApiVersions handshake a connection holds an :class:`ApiVersionTable`: the
broker's ``[min, max]`` per API key. For each request the version used is the
highest one that both the codec and the broker support, optionally capped by the
caller.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Protocol

from aiokafka.errors import UnsupportedVersionError

__all__ = ["ApiVersionTable", "KafkaRequest", "api_name", "api_versions_fallback"]


class KafkaRequest(Protocol):
    """What the connection needs from a generated request class."""

    API_KEY: ClassVar[int]
    MIN_VERSION: ClassVar[int]
    MAX_VERSION: ClassVar[int]

    def encode(self, version: int) -> bytes: ...


def api_name(request_type: type[Any]) -> str:
    """``MetadataRequest`` -> ``"Metadata"`` (for logs and error messages)."""
    name = request_type.__name__
    return name[: -len("Request")] if name.endswith("Request") else name


def api_versions_fallback(rejected: int, advertised: tuple[int, int] | None) -> int:
    """The ApiVersions version to retry after the broker rejected ``rejected`` with
    UNSUPPORTED_VERSION.

    Like the Java client, retry at the highest version the error response advertises
    for ApiVersions. When it advertises nothing usable (no ApiVersions entry, a range
    with ``min > max``, a negative maximum, or a maximum not below the version it just
    rejected) retry at v0: every broker since 0.10 answers ApiVersions v0, while
    stepping down one version at a time from a contradictory range would cost one
    round trip per version.

    Args:
        rejected: The version the broker refused.
        advertised: The ``(min, max)`` ApiVersions range in the error response, if any.

    Returns:
        A version below ``rejected``, or ``-1`` if ``rejected`` was already v0.
    """
    if rejected <= 0:
        return -1
    if advertised is None:
        return 0
    low, high = advertised
    if low > high or high < 0 or high >= rejected:
        return 0
    return high


class ApiVersionTable:
    """The version ranges a broker advertised.

    Args:
        ranges: ``{api_key: (min_version, max_version)}`` from ApiVersionsResponse.
        finalized: ``{feature name: max version level}`` the broker reported as
            finalized for the cluster (KIP-584, ApiVersions v3+), e.g.
            ``transaction.version``.
    """

    def __init__(
        self,
        ranges: Mapping[int, tuple[int, int]],
        finalized: Mapping[str, int] | None = None,
    ) -> None:
        self._ranges = dict(ranges)
        self._finalized = dict(finalized or {})
        # choose()'s answers (the table never changes): one lookup per request.
        self._chosen: dict[tuple[type[Any], int | None], int] = {}

    @classmethod
    def from_response(
        cls, api_keys: Iterable[Any], finalized_features: Iterable[Any] | None = None
    ) -> ApiVersionTable:
        """Build from ApiVersionsResponse ``api_keys`` entries (``api_key``,
        ``min_version``, ``max_version`` attributes) and ``finalized_features``
        entries (``name``, ``max_version_level``)."""
        return cls(
            {k.api_key: (k.min_version, k.max_version) for k in api_keys},
            {f.name: f.max_version_level for f in finalized_features or ()},
        )

    def finalized_level(self, feature: str) -> int:
        """The finalized level of ``feature`` when the connection was made, 0 if the
        broker reported none (an older broker, or a feature never enabled)."""
        return self._finalized.get(feature, 0)

    @property
    def ranges(self) -> dict[int, tuple[int, int]]:
        """A copy of the broker's ranges by API key."""
        return dict(self._ranges)

    def broker_range(self, api_key: int) -> tuple[int, int] | None:
        """The broker's ``(min, max)`` for ``api_key``, or ``None`` if it lacks the API."""
        return self._ranges.get(api_key)

    def choose(self, request_type: type[Any], max_version: int | None = None) -> int:
        """Return the highest version both sides support for ``request_type``.

        Args:
            request_type: A generated request class (``API_KEY``, ``MIN_VERSION``,
                ``MAX_VERSION``).
            max_version: Optional caller cap (e.g. to avoid a feature of newer versions).

        Raises:
            aiokafka.errors.UnsupportedVersionError: the broker lacks the API, or the
                ranges (after the cap) do not overlap.
        """
        chosen = self._chosen.get((request_type, max_version))
        if chosen is not None:
            return chosen
        key: int = request_type.API_KEY
        broker = self._ranges.get(key)
        name = api_name(request_type)
        if broker is None:
            raise UnsupportedVersionError(f"the broker does not support the {name} API (key {key})")
        ours_min: int = request_type.MIN_VERSION
        ours_max: int = request_type.MAX_VERSION
        high = min(ours_max, broker[1])
        if max_version is not None:
            high = min(high, max_version)
        low = max(ours_min, broker[0])
        if low > high:
            cap = f", capped at v{max_version}" if max_version is not None else ""
            raise UnsupportedVersionError(
                f"no common version for {name}: client v{ours_min}-v{ours_max}{cap}, "
                f"broker v{broker[0]}-v{broker[1]}"
            )
        self._chosen[(request_type, max_version)] = high
        return high

    def summary(self, request_types: Iterable[type[Any]]) -> str:
        """``"Metadata=v12, Produce=v11, ..."`` for the given request classes
        (APIs without a common version show as ``-``)."""
        parts = []
        for rt in sorted(request_types, key=lambda t: int(t.API_KEY)):
            try:
                parts.append(f"{api_name(rt)}=v{self.choose(rt)}")
            except UnsupportedVersionError:
                parts.append(f"{api_name(rt)}=-")
        return ", ".join(parts)
