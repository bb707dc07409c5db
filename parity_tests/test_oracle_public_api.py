"""The oracle's public names load from the package itself, wherever their module lives inside it."""
from __future__ import annotations

import inspect

import pytest

pytest.importorskip("hypothesis")

import parity_tests.oracle as oracle  # noqa: E402


@pytest.mark.parametrize("name", [n for n in oracle.__all__ if n != "__version__"])
def test_every_public_name_loads_and_is_what_it_says(name):
    obj = getattr(oracle, name)
    assert obj is not None
    if inspect.isfunction(obj) or inspect.isclass(obj):
        assert obj.__name__ == name
        assert obj.__module__.startswith("parity_tests.oracle.")


def test_an_unknown_name_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="no_such_thing"):
        oracle.no_such_thing  # noqa: B018


def test_the_command_line_entry_points_resolve():
    from parity_tests.oracle.cli import main
    assert callable(main)
    from pathlib import Path

    import tomllib
    scripts = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["npformer-oracle"] == "parity_tests.oracle.cli:main"
