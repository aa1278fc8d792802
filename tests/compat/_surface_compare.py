"""Compare two surface dumps (see ``_surface_dump.py``): what aiokafka 0.14 offers
that ours lacks or offers differently. Pure functions, no I/O."""

from __future__ import annotations

from typing import Any

NO_DEFAULT = "<no default>"
_POSITIONAL = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")


def _params(
    where: str, theirs: list[dict[str, Any]] | None, ours: list[dict[str, Any]] | None
) -> list[tuple[str, str]]:
    """Differences that break a call written for aiokafka: a parameter missing, moved
    (positional index), made keyword-only, made required, or with another default."""
    if theirs is None or ours is None:
        return []
    out: list[tuple[str, str]] = []
    ours_by_name = {p["name"]: (i, p) for i, p in enumerate(ours)}
    takes_kwargs = any(p["kind"] == "VAR_KEYWORD" for p in ours)
    takes_args = any(p["kind"] == "VAR_POSITIONAL" for p in ours)
    for index, p in enumerate(theirs):
        if p["kind"] in ("VAR_POSITIONAL", "VAR_KEYWORD"):
            continue
        key = f"{where}({p['name']})"
        found = ours_by_name.get(p["name"])
        if found is None:
            if p["kind"] == "KEYWORD_ONLY" and takes_kwargs:
                out.append((key, "accepted only through **kwargs"))
            elif not (takes_args and takes_kwargs):
                out.append((key, "parameter missing"))
            continue
        our_index, q = found
        if p["kind"] in _POSITIONAL and q["kind"] not in _POSITIONAL:
            out.append((key, f"positional in aiokafka, {q['kind']} here"))
        elif p["kind"] in _POSITIONAL and our_index != index:
            out.append((key, f"position {index} in aiokafka, {our_index} here"))
        if p["kind"] == "POSITIONAL_OR_KEYWORD" and q["kind"] == "POSITIONAL_ONLY":
            out.append((key, "keyword in aiokafka, positional-only here"))
        if p["default"] != NO_DEFAULT and q["default"] == NO_DEFAULT:
            out.append((key, "optional in aiokafka, required here"))
        elif p["default"] != q["default"] and p["default"] != NO_DEFAULT:
            out.append((key, f"default {p['default']!r} in aiokafka, {q['default']!r} here"))
    for name, (_i, q) in ours_by_name.items():
        known = any(p["name"] == name for p in theirs)
        if (
            not known
            and q["default"] == NO_DEFAULT
            and q["kind"]
            not in (
                "VAR_POSITIONAL",
                "VAR_KEYWORD",
            )
        ):
            out.append((f"{where}({name})", "new required parameter"))
    return out


def _callable(where: str, theirs: dict[str, Any], ours: dict[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if ours.get("kind") != "function":
        return [(where, f"a function in aiokafka, a {ours.get('kind')} here")]
    if theirs.get("binding", "function") != ours.get("binding", "function"):
        out.append((where, f"{theirs.get('binding')} in aiokafka, {ours.get('binding')} here"))
    if theirs["async"] != ours["async"]:
        kinds = {True: "a coroutine function", False: "a plain function"}
        out.append((where, f"{kinds[theirs['async']]} in aiokafka, {kinds[ours['async']]} here"))
    out.extend(_params(where, theirs["params"], ours["params"]))
    return out


def _class(where: str, theirs: dict[str, Any], ours: dict[str, Any]) -> list[tuple[str, str]]:
    if ours.get("kind") != "class":
        return [(where, f"a class in aiokafka, a {ours.get('kind')} here")]
    out: list[tuple[str, str]] = []
    missing_bases = [b for b in theirs["bases"] if b not in ours["bases"]]
    # Only aiokafka's own classes matter (typing/ABC helpers differ legitimately).
    missing_bases = [b for b in missing_bases if b not in ("Generic", "ABC", "NamedTuple")]
    if missing_bases:
        out.append((where, f"not a subclass of {', '.join(missing_bases)} here"))
    if theirs["errno"] is not None and theirs["errno"] != ours["errno"]:
        out.append((where, f"errno {theirs['errno']} in aiokafka, {ours['errno']} here"))
    out.extend(_params(f"{where}.__init__", theirs["init"], ours["init"]))
    for name, member in theirs["members"].items():
        if name == "__init__":
            continue
        mine = ours["members"].get(name)
        key = f"{where}.{name}"
        if mine is None:
            out.append((key, "missing"))
        elif member["kind"] == "function":
            if mine["kind"] == "function":
                out.extend(_callable(key, member, mine))
            else:
                out.append((key, f"a method in aiokafka, a {mine['kind']} here"))
        elif member["kind"] == "property" and mine["kind"] == "function":
            out.append((key, "an attribute in aiokafka, a method here"))
    return out


def compare(theirs: dict[str, Any], ours: dict[str, Any]) -> list[tuple[str, str]]:
    """Every difference as ``(key, what)``; keys look like
    ``"aiokafka.admin:AIOKafkaAdminClient.create_topics(timeout_ms)"``."""
    out: list[tuple[str, str]] = []
    for module, their_mod in theirs.items():
        our_mod = ours.get(module, {"missing": True, "names": {}})
        if our_mod["missing"]:
            out.append((module, "module missing"))
            continue
        for name, entry in their_mod["names"].items():
            key = f"{module}:{name}"
            mine = our_mod["names"].get(name, {"kind": "absent"})
            if mine["kind"] == "absent":
                out.append((key, "missing"))
            elif entry["kind"] == "class":
                out.extend(_class(key, entry, mine))
            elif entry["kind"] == "function":
                out.extend(_callable(key, entry, mine))
    return out
