"""The public API is curated: exactly these names, all importable and documented."""

from __future__ import annotations

import pytest

import mcpctl


def test_exported_members() -> None:
    assert mcpctl.__all__ == [
        "ChangeCommand", "CommandRun", "Config", "ConfigChange", "ConfigError", "ConfigInvalidError", "ConfigStore",
        "ConfigSyntaxError", "LoadResult", "McpctlError", "OutsideError", "Paths",
        "PlaceholderError", "Problem", "ResolvedEntry", "Result", "ServerEntry", "Snapshot",
        "SnapshotDiff", "TrustStore", "UsageError", "ValidationReport", "__version__", "diff_snapshots",
        "load_config", "load_snapshot", "resolve_entry", "save_snapshot", "validate_config",
        "watch_config",
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


def _subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_subclasses(sub)]
    return out


def test_error_tree_codes_are_unique_and_documented() -> None:
    """Every error class, exported or not, is in the tree with its code and exit code."""
    from importlib import import_module

    # Load every module that could define an error before walking the tree.
    for module in ("mcpctl.cli.app", "mcpctl.probe.health", "mcpctl.registry.install"):
        import_module(module)
    from mcpctl import errors

    classes = [errors.McpctlError, *_subclasses(errors.McpctlError)]
    assert len(classes) > 20
    codes = [c.code for c in classes]
    assert len(codes) == len(set(codes)), sorted(codes)
    tree = errors.__doc__ or ""
    for cls in classes:
        assert cls.__module__ == "mcpctl.errors", f"{cls.__name__} is defined outside errors.py"
        line = next((ln for ln in tree.splitlines() if f" {cls.__name__} " in f" {ln} "), "")
        assert line, f"{cls.__name__} is missing from the tree"
        assert f"exit {cls.exit_code}" in line and cls.code in line, line
        assert cls.exit_code in (1, 2, 3)
        assert cls.__name__ in errors.__all__


def test_probe_exports() -> None:
    import mcpctl.probe

    for name in mcpctl.probe.__all__:
        assert getattr(mcpctl.probe, name).__doc__, name
    assert {"probe", "probe_all", "list_tools", "call_tool", "open_session"} <= set(
        mcpctl.probe.__all__
    )
    # The verdict on a server is public: its values are part of the JSON of health.
    assert [s.value for s in mcpctl.probe.HealthStatus] == [
        "healthy", "degraded", "needs_auth", "unhealthy", "unavailable",
    ]  # fmt: skip


def test_docstring_references_resolve() -> None:
    """A docstring that points at ``mcpctl.x.Name`` points at something that is there."""
    import re
    from importlib import import_module
    from pathlib import Path

    reference = re.compile(r":(?:class|func|mod|data|meth|attr|exc|obj):`~?(mcpctl(?:\.\w+)+)`")
    stale = []
    for file in sorted(Path(mcpctl.__file__).parent.rglob("*.py")):
        text = file.read_text(encoding="utf-8")
        for found in reference.finditer(text):
            parts = found.group(1).split(".")
            for cut in range(len(parts), 0, -1):
                try:
                    target: object = import_module(".".join(parts[:cut]))
                except ImportError:
                    continue
                for name in parts[cut:]:
                    target = getattr(target, name, None)
                break
            if target is None:
                stale.append(f"{file.name}: {found.group(1)}")
    assert not stale, stale


LAZY_PACKAGES = ["mcpctl", "mcpctl.auth", "mcpctl.doctor", "mcpctl.probe", "mcpctl.snapshot"]


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_each_lazy_package_exports_exactly_what_it_lists(package: str) -> None:
    import importlib

    module = importlib.import_module(package)
    table = module._LAZY
    eager = {n for n in module.__all__ if n not in table}
    # Every lazily exported name is in __all__, and every name of __all__ is either lazy or
    # defined at import already (the version, say).
    assert set(table) <= set(module.__all__)
    assert all(n in vars(module) for n in eager), eager - set(vars(module))
    assert dir(module) == sorted(module.__all__)
    for name, where in table.items():
        assert hasattr(importlib.import_module(where), name), f"{package}.{name}: not in {where}"
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        module.nope  # noqa: B018
