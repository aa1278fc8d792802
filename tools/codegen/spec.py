"""Parsed model of Kafka's JSON message definitions.

The JSON files under ``kafka-protocol/message/`` describe each message once for all of
its versions. This module turns them into small immutable objects that the emitters
(and the round-trip tests, which derive Hypothesis strategies from the same model)
query by version, so no other module has to know the JSON spelling.
"""

from __future__ import annotations

import json
import keyword
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "DATA_MESSAGES",
    "HEADER_MESSAGES",
    "PROJECT_DEFINITIONS",
    "SAME_LAYOUT_VERSIONS",
    "FieldSpec",
    "MessageSpec",
    "StructSpec",
    "Versions",
    "definition_files",
    "load_message",
    "load_selected",
    "snake_case",
]

# Data messages carried inside other messages' bytes fields (the consumer group protocol).
DATA_MESSAGES = ("ConsumerProtocolSubscription", "ConsumerProtocolAssignment")
HEADER_MESSAGES = ("RequestHeader", "ResponseHeader")

# Versions that Apache Kafka added after the definitions in kafka-protocol/ were taken
# (4.0.0-SNAPSHOT, October 2024) and that repeat the previous version's layout byte for
# byte: only what the broker does with them differs. Kafka 4.0 bumped these for
# transaction version 2 (KIP-890 part 2): a transactional Produce v12 lets the broker add
# the partition to the transaction itself, and TxnOffsetCommit v5 does the same for the
# consumer group, so the client sends no AddPartitionsToTxn / AddOffsetsToTxn. A client
# that cannot name these versions cannot use transaction version 2 at all.
# message name -> (the new highest version, the version whose layout it repeats).
# load_message() checks that no field, nullability, tag or flexibility changes between the
# two, so a definitions update that makes them differ fails generation loudly.
SAME_LAYOUT_VERSIONS: dict[str, tuple[int, int]] = {
    "ProduceRequest": (12, 11),
    "ProduceResponse": (12, 11),
    "TxnOffsetCommitRequest": (5, 4),
    "TxnOffsetCommitResponse": (5, 4),
}

# The project's own definitions of messages newer than the shared set (see README.md
# there): a file named like a shared one replaces it, a new name adds an API.
PROJECT_DEFINITIONS = Path(__file__).resolve().parent / "definitions"

# Upper bound used for open ranges ("3+"); message versions never get near it.
_OPEN = 1 << 15

PRIMITIVE_TYPES = frozenset(
    {
        "bool",
        "int8",
        "int16",
        "uint16",
        "int32",
        "uint32",
        "int64",
        "float64",
        "uuid",
        "string",
        "bytes",
        "records",
    }
)


@dataclass(frozen=True)
class Versions:
    """An inclusive version range; ``lo > hi`` means no version at all."""

    lo: int
    hi: int

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        """Parse ``"none"``, ``"3"``, ``"3+"`` or ``"1-4"``."""
        if text is None or text.strip() == "none":
            return cls(1, 0)
        text = text.strip()
        if text.endswith("+"):
            return cls(int(text[:-1]), _OPEN)
        if "-" in text:
            lo, hi = text.split("-", 1)
            return cls(int(lo), int(hi))
        return cls(int(text), int(text))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.lo <= version <= self.hi

    @property
    def empty(self) -> bool:
        """True when the range holds no version."""
        return self.lo > self.hi


_SNAKE_1 = re.compile(r"([a-z0-9])([A-Z])")
_SNAKE_2 = re.compile(r"([A-Z]+)([A-Z][a-z])")


def snake_case(name: str) -> str:
    """``ThrottleTimeMs`` -> ``throttle_time_ms``, ``KRaftVersion`` -> ``k_raft_version``."""
    out = _SNAKE_2.sub(r"\1_\2", name)
    out = _SNAKE_1.sub(r"\1_\2", out).lower()
    if keyword.iskeyword(out):
        out += "_"
    return out


@dataclass
class StructSpec:
    """A struct: the message body itself, an inline struct or a common struct."""

    name: str  # the JSON type name
    fields: list[FieldSpec]
    class_name: str = ""  # the Python class name, set once collisions are known
    owner: str = ""  # the message that defines it (used to qualify colliding names)


@dataclass
class FieldSpec:
    """One field of a struct, with its version gates."""

    name: str
    type: str  # as in the JSON: "int32", "string", "[]int32", "[]Topic", "Topic"
    versions: Versions
    nullable_versions: Versions
    tagged_versions: Versions
    tag: int | None
    ignorable: bool
    default_text: str | None
    flexible_override: Versions | None  # a field-level "flexibleVersions" (RequestHeader)
    struct: StructSpec | None = None  # set for struct and struct-array fields

    @property
    def py_name(self) -> str:
        """The attribute name in the generated class."""
        return snake_case(self.name)

    @property
    def is_array(self) -> bool:
        """True for ``[]T`` fields."""
        return self.type.startswith("[]")

    @property
    def elem_type(self) -> str:
        """The element type of an array, or the type itself."""
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        """True for a single (non-array) struct field."""
        return not self.is_array and self.struct is not None

    def present(self, version: int) -> bool:
        """Whether the field is in the message at ``version``."""
        return version in self.versions

    def tagged(self, version: int) -> bool:
        """Whether the field is a tagged field at ``version``."""
        return self.tag is not None and version in self.tagged_versions

    def nullable(self, version: int) -> bool:
        """Whether ``None`` may be encoded at ``version``."""
        return version in self.nullable_versions

    @property
    def ever_nullable(self) -> bool:
        """Whether some version allows ``None`` (decides the Python type)."""
        return not self.nullable_versions.empty

    def flexible_encoding(self, version: int, message_flexible: bool) -> bool:
        """Whether a string/bytes/array uses the compact (flexible) encoding."""
        if self.flexible_override is not None:
            return version in self.flexible_override
        return message_flexible


@dataclass
class MessageSpec:
    """A whole JSON file: a request, a response, a header or a data message."""

    name: str
    kind: str  # "request", "response", "header" or "data"
    api_key: int | None
    valid: Versions
    flexible: Versions
    body: StructSpec
    structs: list[StructSpec] = field(default_factory=list)  # every nested struct
    listeners: tuple[str, ...] = ()
    source: str = ""
    project: bool = False  # read from PROJECT_DEFINITIONS rather than the shared set

    @property
    def versions(self) -> range:
        """Every valid version."""
        return range(self.valid.lo, self.valid.hi + 1)

    def is_flexible(self, version: int) -> bool:
        """Whether ``version`` uses the flexible (KIP-482) encoding."""
        return version in self.flexible


def _strip_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))


def _parse_fields(
    raw: list[dict[str, object]],
    owner: str,
    structs: list[StructSpec],
    common: dict[str, StructSpec],
) -> list[FieldSpec]:
    out: list[FieldSpec] = []
    for f in raw:
        name = str(f["name"])
        ftype = str(f["type"])
        versions = Versions.parse(str(f["versions"]))
        tag = f.get("tag")
        spec = FieldSpec(
            name=name,
            type=ftype,
            versions=versions,
            nullable_versions=Versions.parse(_opt_str(f.get("nullableVersions"))),
            tagged_versions=Versions.parse(_opt_str(f.get("taggedVersions"))),
            tag=int(str(tag)) if tag is not None else None,
            ignorable=bool(f.get("ignorable", False)),
            default_text=_opt_str(f.get("default")),
            flexible_override=(
                Versions.parse(str(f["flexibleVersions"])) if "flexibleVersions" in f else None
            ),
        )
        elem = spec.elem_type
        if elem not in PRIMITIVE_TYPES:
            sub = f.get("fields")
            if isinstance(sub, list):
                struct = StructSpec(name=elem, fields=[], owner=owner)
                structs.append(struct)
                struct.fields = _parse_fields(sub, owner, structs, common)
                spec.struct = struct
            elif elem in common:
                spec.struct = common[elem]
            else:
                raise ValueError(f"{owner}.{name}: unknown type {ftype!r}")
        out.append(spec)
    return out


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)


def load_message(path: Path) -> MessageSpec:
    """Parse one JSON definition file."""
    raw = json.loads(_strip_comments(path.read_text(encoding="utf-8")))
    name = str(raw["name"])
    structs: list[StructSpec] = []
    common: dict[str, StructSpec] = {}
    for cs in raw.get("commonStructs", []):
        common[cs["name"]] = StructSpec(name=cs["name"], fields=[], owner=name)
    for cs in raw.get("commonStructs", []):
        st = common[cs["name"]]
        structs.append(st)
        st.fields = _parse_fields(cs["fields"], name, structs, common)
    body = StructSpec(name=name, fields=[], class_name=name, owner=name)
    body.fields = _parse_fields(raw["fields"], name, structs, common)
    api_key = raw.get("apiKey")
    valid = Versions.parse(str(raw["validVersions"]))
    flexible = Versions.parse(str(raw["flexibleVersions"]))
    if name in SAME_LAYOUT_VERSIONS:
        valid = _extend_same_layout(name, valid, flexible, body, structs)
    return MessageSpec(
        name=name,
        kind=str(raw["type"]),
        api_key=int(api_key) if api_key is not None else None,
        valid=valid,
        flexible=flexible,
        body=body,
        structs=structs,
        listeners=tuple(raw.get("listeners", ())),
        source=path.name,
        project=path.parent == PROJECT_DEFINITIONS,
    )


def _extend_same_layout(
    name: str, valid: Versions, flexible: Versions, body: StructSpec, structs: list[StructSpec]
) -> Versions:
    """Extend ``valid`` per :data:`SAME_LAYOUT_VERSIONS` after checking that the new
    version encodes exactly like the one it repeats."""
    new, base = SAME_LAYOUT_VERSIONS[name]
    if valid.hi >= new:
        return valid  # the definitions caught up; nothing to add
    if valid.hi != base or new != base + 1:
        raise ValueError(f"{name}: cannot add v{new} as a copy of v{base} (valid {valid})")
    if (base in flexible) != (new in flexible):
        raise ValueError(f"{name}: v{new} and v{base} differ in flexibility")
    for struct in [body, *structs]:
        for f in struct.fields:
            same = (
                f.present(base) == f.present(new)
                and f.nullable(base) == f.nullable(new)
                and f.tagged(base) == f.tagged(new)
                and f.flexible_encoding(base, True) == f.flexible_encoding(new, True)
            )
            if not same:
                raise ValueError(f"{name}.{f.name}: v{new} would not repeat v{base}'s layout")
    return Versions(valid.lo, new)


def load_selected(spec_dir: Path) -> list[tuple[str, list[MessageSpec]]]:
    """Every message group to generate, as ``(module_name, [messages])``.

    A group is a request with its response (one module per API), a data message, or
    the two headers together.
    """
    files = definition_files(spec_dir)
    groups: list[tuple[str, list[MessageSpec]]] = []
    for file_name, path in sorted(files.items()):
        if not file_name.endswith("Request.json") or file_name == "RequestHeader.json":
            continue
        req = load_message(path)
        if req.kind != "request" or "broker" not in req.listeners:
            continue
        resp = load_message(files[file_name.replace("Request.json", "Response.json")])
        groups.append((snake_case(req.name[: -len("Request")]), [req, resp]))
    for name in DATA_MESSAGES:
        groups.append((snake_case(name), [load_message(files[f"{name}.json"])]))
    headers = [load_message(files[f"{n}.json"]) for n in HEADER_MESSAGES]
    groups.append(("header", headers))
    groups.sort(key=lambda g: g[0])
    return groups


def _max_version(path: Path) -> int:
    raw = json.loads(_strip_comments(path.read_text(encoding="utf-8")))
    return Versions.parse(str(raw["validVersions"])).hi


def definition_files(spec_dir: Path, project_dir: Path = PROJECT_DEFINITIONS) -> dict[str, Path]:
    """Every message definition by file name: the shared set under ``spec_dir/message``
    with the project's files (``project_dir``) replacing or adding to it.

    Raises:
        ValueError: the shared set defines a higher version of a message than the
            project's file, which is then stale (delete it and regenerate).
    """
    files = {p.name: p for p in (spec_dir / "message").glob("*.json")}
    for path in sorted(project_dir.glob("*.json")):
        shared = files.get(path.name)
        if shared is not None and _max_version(shared) > _max_version(path):
            raise ValueError(
                f"{path}: the shared definitions now go further ({shared}); "
                "delete the project's file and regenerate"
            )
        files[path.name] = path
    return files
