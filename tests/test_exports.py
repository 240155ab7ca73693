"""The public API is curated: exactly these names, all importable and documented."""

from __future__ import annotations

import mcpctl


def test_exported_members() -> None:
    assert mcpctl.__all__ == [
        "Config", "ConfigError", "ConfigInvalidError", "ConfigStore", "ConfigSyntaxError",
        "LoadResult", "McpctlError", "OutsideError", "Paths", "PlaceholderError", "Problem",
        "ResolvedEntry", "Result", "ServerEntry", "UsageError", "ValidationReport",
        "__version__", "load_config", "resolve_entry", "validate_config",
    ]  # fmt: skip
    for name in mcpctl.__all__:
        value = getattr(mcpctl, name)
        if name != "__version__":
            assert value.__doc__, f"mcpctl.{name} has no docstring"
            assert value.__module__.startswith("mcpctl."), name
    assert sorted(dir(mcpctl)) == sorted(mcpctl.__all__)


def test_py_typed_is_shipped() -> None:
    from pathlib import Path

    assert (Path(mcpctl.__file__).parent / "py.typed").exists()


def test_error_tree_codes_are_unique_and_documented() -> None:
    from mcpctl import errors

    classes = [getattr(errors, n) for n in errors.__all__ if isinstance(getattr(errors, n), type)]
    codes = [c.code for c in classes]
    assert len(codes) == len(set(codes))
    for cls in classes:
        assert cls.__name__ in (errors.__doc__ or ""), f"{cls.__name__} missing from the tree"
        assert cls.code in (errors.__doc__ or "")
        assert cls.exit_code in (1, 2, 3)
