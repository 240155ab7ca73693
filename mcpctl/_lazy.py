"""Names a package exports but loads on first use: one helper for every ``__init__.py``.

A package lists its public names in ``__all__`` and, for each one loaded lazily, the module
that defines it (``{"probe": "mcpctl.probe.health"}``); :func:`lazy_exports` gives it the
module-level ``__getattr__`` and ``__dir__`` (PEP 562) that import that module when the name
is first used, so importing the package itself costs nothing. ``tests/test_exports.py``
checks that each package's table and ``__all__`` agree.
"""

from __future__ import annotations

import sys
from importlib import import_module

TYPE_CHECKING = False  # typing is not worth its import on the quick paths
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose names in ``table`` load from the
    module each maps to (and are then kept in the package's namespace)."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(namespace["__all__"])

    return __getattr__, __dir__
