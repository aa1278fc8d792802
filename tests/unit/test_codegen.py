"""The committed generated protocol modules match what the generator produces."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tools.codegen import messages
from tools.codegen.__main__ import DEFAULT_SPEC, REPO
from tools.codegen.spec import PROJECT_DEFINITIONS, definition_files


def test_check_passes_on_committed_tree() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tools.codegen", "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_generate_matches_disk_and_detects_tampering(tmp_path: Path) -> None:
    outputs = messages.generate(DEFAULT_SPEC)
    assert "aiokafka/protocol/_gen/fetch.py" in outputs
    for path, text in outputs.items():
        assert (REPO / path).read_text(encoding="utf-8") == text, path
    # A tampered copy differs from the generator's output, which is what --check reports.
    tampered = outputs["aiokafka/protocol/_gen/fetch.py"].replace("pos += 4", "pos += 5", 1)
    assert tampered != outputs["aiokafka/protocol/_gen/fetch.py"]


def test_check_fails_when_a_definition_changes(tmp_path: Path) -> None:
    # Point --check at a spec tree whose Metadata definition gained a version: the
    # committed modules are then stale and the check must fail.
    spec = tmp_path / "spec"
    (spec / "message").mkdir(parents=True)
    for src in (DEFAULT_SPEC / "message").glob("*.json"):
        text = src.read_text(encoding="utf-8")
        if src.name in ("MetadataRequest.json", "MetadataResponse.json"):
            text = text.replace('"validVersions": "0-12"', '"validVersions": "0-13"')
        (spec / "message" / src.name).write_text(text, encoding="utf-8")
    (spec / "errors.json").write_text(
        (DEFAULT_SPEC / "errors.json").read_text(encoding="utf-8"), encoding="utf-8"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "tools.codegen", "--check", "--spec", str(spec)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1
    assert "generated file differs: aiokafka/protocol/_gen/metadata.py" in proc.stderr


def test_generated_modules_carry_the_notice() -> None:
    for path, text in messages.generate(DEFAULT_SPEC).items():
        assert "DO NOT EDIT" in text.splitlines()[2], path
        assert "Apache License, Version 2.0" in text, path
        # The definitions' prose ("about") is not copied into the code.
        assert "The duration in milliseconds for which the request was throttled" not in text


def test_project_definitions_replace_and_extend_the_shared_set(tmp_path: Path) -> None:
    files = definition_files(DEFAULT_SPEC)
    # The shared ShareFetch (v0 only) is replaced; the offsets APIs are added.
    assert files["ShareFetchRequest.json"].parent == PROJECT_DEFINITIONS
    assert files["DescribeShareGroupOffsetsResponse.json"].parent == PROJECT_DEFINITIONS
    assert files["MetadataRequest.json"].parent == DEFAULT_SPEC / "message"
    by_name = {m.name: m for _, msgs in messages.load_named(DEFAULT_SPEC) for m in msgs}
    assert (by_name["ShareFetchRequest"].valid.lo, by_name["ShareFetchRequest"].valid.hi) == (1, 2)
    assert by_name["ShareFetchRequest"].project and not by_name["MetadataRequest"].project
    assert by_name["AlterShareGroupOffsetsRequest"].api_key == 91
    text = messages.generate(DEFAULT_SPEC)["aiokafka/protocol/_gen/share_fetch.py"]
    assert "tools/codegen/definitions/" in text.splitlines()[1]


def test_a_project_definition_behind_the_shared_set_fails(tmp_path: Path) -> None:
    # A shared set that caught up past the project's file: generation refuses to let
    # the older project file win.
    spec = tmp_path / "spec"
    (spec / "message").mkdir(parents=True)
    text = (PROJECT_DEFINITIONS / "ShareFetchRequest.json").read_text(encoding="utf-8")
    newer = text.replace('"validVersions": "1-2"', '"validVersions": "1-3"')
    assert newer != text
    (spec / "message" / "ShareFetchRequest.json").write_text(newer, encoding="utf-8")
    with pytest.raises(ValueError, match="delete the project's file"):
        definition_files(spec)
    # The same version (or an older one) in the shared set: the project's file wins.
    (spec / "message" / "ShareFetchRequest.json").write_text(text, encoding="utf-8")
    assert definition_files(spec)["ShareFetchRequest.json"].parent == PROJECT_DEFINITIONS
