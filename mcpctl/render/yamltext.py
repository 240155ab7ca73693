"""YAML for the targets that read or write it: always the safe loader and dumper, in C when
PyYAML has libyaml (about ten times faster on a thousand servers)."""

from __future__ import annotations

from typing import Any

__all__ = ["dump_yaml", "load_yaml", "load_yaml_stream"]


def _loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _no_surrogates(text: str) -> None:
    """Raise yaml.YAMLError for a lone surrogate, as the pure-Python loader does (the C one
    fails to encode it with a UnicodeEncodeError instead)."""
    import yaml

    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise yaml.YAMLError(f"a lone surrogate at position {exc.start}") from None


def load_yaml(text: str) -> Any:
    """One YAML document (``None`` when empty).

    Raises:
        yaml.YAMLError: not YAML.
    """
    import yaml

    _no_surrogates(text)
    return yaml.load(text, Loader=_loader())  # noqa: S506 - a safe loader, C or Python


def load_yaml_stream(text: str) -> list[Any]:
    """Every document of a YAML stream (``---`` separated).

    Raises:
        yaml.YAMLError: not YAML.
    """
    import yaml

    _no_surrogates(text)
    return list(yaml.load_all(text, Loader=_loader()))


def dump_yaml(doc: Any) -> str:
    """``doc`` as block YAML, keys in the order given, Unicode as is."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return str(yaml.dump(doc, Dumper=dumper, sort_keys=False, allow_unicode=True, width=100))
