"""What aiokafka/_cext.h gives _cbuilder and _cdecode: module definition and the
positional-argument check of their functions (AK_MODULE, AK_POSITIONAL)."""

from __future__ import annotations

import importlib

import pytest

from aiokafka._extensions import load_extension

_FUNCTIONS = {
    "aiokafka.record._cbuilder": {
        "append_record": 7,
        "append_values": 6,
        "bind_adder": 1,
        "bind_builder": 3,
        "bind_batch": 2,
    },
    "aiokafka.record._cdecode": {"decode_records": 11, "decode_batch": 6, "deserialize": 4},
}


@pytest.mark.parametrize("name", sorted(_FUNCTIONS))
def test_module_has_its_functions_and_docs(name: str) -> None:
    if load_extension(name) is None:
        pytest.skip(f"{name} is not built")
    module = importlib.import_module(name)
    assert module.__name__ == name
    assert module.__doc__
    public = {n for n in vars(module) if not n.startswith("_")}
    assert public == set(_FUNCTIONS[name])
    for function in _FUNCTIONS[name]:
        assert getattr(module, function).__doc__


@pytest.mark.parametrize(
    ("name", "function", "count"),
    [(m, f, n) for m, fs in sorted(_FUNCTIONS.items()) for f, n in sorted(fs.items())],
)
def test_wrong_argument_count_is_a_type_error(name: str, function: str, count: int) -> None:
    module = load_extension(name)
    if module is None:
        pytest.skip(f"{name} is not built")
    with pytest.raises(TypeError, match=rf"^{function}\(\) takes {count} arguments \(0 given\)$"):
        getattr(module, function)()
    with pytest.raises(TypeError, match=rf"\({count + 1} given\)"):
        getattr(module, function)(*([None] * (count + 1)))
