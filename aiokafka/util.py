"""aiokafka 0.14's ``aiokafka.util.parse_kafka_version`` (compatibility shim).

faust-streaming 0.15 imports it from here (``faust/transport/drivers/aiokafka.py``);
the rest of aiokafka 0.14's ``util`` module (event loop helpers) is not offered.
"""

from __future__ import annotations

import re

__all__ = ["parse_kafka_version"]

# A PEP 440 version as aiokafka 0.14 reads it (``packaging.version.Version``): the
# dotted release numbers, then optional pre-, post- and dev-release and local parts,
# which it ignores.
_VERSION = re.compile(
    r"v?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?\d*)?"
    r"(?:-\d+|[-_.]?(?:post|rev|r)[-_.]?\d*)?"
    r"(?:[-_.]?dev[-_.]?\d*)?"
    r"(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?",
    re.IGNORECASE,
)


def parse_kafka_version(api_version: str) -> tuple[int, int, int]:
    """Parse a broker version such as ``"2.8"`` or ``"2.4.1"`` into three numbers.

    As in aiokafka 0.14: two or three release numbers (a missing third is 0), and only
    versions from 0.9 up to, not including, 3.0 (the range of aiokafka 0.14's old
    ``api_version`` option).

    Raises:
        ValueError: ``api_version`` is not a version, has fewer than two or more than
            three numbers, or is outside 0.9 to 3.0.
    """
    match = _VERSION.fullmatch(api_version.strip())
    if match is None:
        raise ValueError(f"Invalid version: {api_version!r}")
    release = tuple(int(part) for part in match["release"].split("."))
    if not 2 <= len(release) <= 3:
        raise ValueError(api_version)
    version = (release[0], release[1], release[2] if len(release) == 3 else 0)
    if not (0, 9) <= version < (3, 0):
        raise ValueError(api_version)
    return version
