"""The YAML every YAML client file is written and read with: safe, in C when PyYAML has it."""

from __future__ import annotations

import random

import pytest
import yaml

from mcpctl.render.yamltext import dump_yaml, yaml_loader


def test_the_loader_is_the_safe_one_in_c_when_pyyaml_has_libyaml() -> None:
    expected = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader
    assert yaml_loader() is expected
    loader = yaml_loader()("!!python/object/apply:os.getcwd []")
    try:
        with pytest.raises(yaml.constructor.ConstructorError):
            loader.get_single_data()
    finally:
        loader.dispose()


def test_without_libyaml_the_pure_python_safe_loader_and_dumper_are_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A PyYAML built without libyaml has no C classes at all.
    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    monkeypatch.delattr(yaml, "CSafeDumper", raising=False)
    assert yaml_loader() is yaml.SafeLoader
    assert dump_yaml({"servers": {"a": {"command": "npx"}}}) == "servers:\n  a:\n    command: npx\n"


def test_keys_keep_their_order_and_unicode_is_written_as_is() -> None:
    text = dump_yaml({"zeta": "café ✓ 日本", "alpha": [1, 2]})
    assert text == "zeta: café ✓ 日本\nalpha:\n- 1\n- 2\n"


def test_python_objects_are_refused_not_written_with_python_tags() -> None:
    class Opaque:
        pass

    with pytest.raises(yaml.representer.RepresenterError):
        dump_yaml({"a": Opaque()})


def test_long_values_are_folded_at_the_first_space_past_column_100() -> None:
    rng = random.Random(1)
    value = " ".join("x" * rng.randint(1, 9) for _ in range(400))
    text = dump_yaml({"description": value})
    lines = text.splitlines()
    assert len(lines) > 10
    for line in lines[:-1]:
        head, _, _last_word = line.rpartition(" ")
        # Folded only once past column 100, and at the first space there.
        assert len(line) > 100 and len(head) <= 100, line
    assert yaml.safe_load(text) == {"description": value}
