"""YAML for the targets that read or write it: always the safe loader and dumper, in C when
PyYAML has libyaml (about ten times faster on a thousand servers). Reading goes through
:func:`mcpctl.render.readers.load_yaml`, which adds the limits every client file is read
with."""

from __future__ import annotations

from typing import Any

__all__ = ["dump_yaml", "yaml_loader"]


def yaml_loader() -> Any:
    """The safe loader class, in C when available."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def dump_yaml(doc: Any) -> str:
    """``doc`` as block YAML, keys in the order given, Unicode as is."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return str(yaml.dump(doc, Dumper=dumper, sort_keys=False, allow_unicode=True, width=100))
