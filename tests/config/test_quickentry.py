"""The launcher's quick reader starts exactly what the config model would, or nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpctl.config.checks import entry_from_data
from mcpctl.config.placeholders import resolve_entry
from mcpctl.config.quickentry import plain_entry
from mcpctl.errors import InvalidEntryError
from mcpctl.probe.childenv import child_env
from mcpctl.probe.serverenv import server_env

ENVIRON = {"HOME": "/home/u", "PATH": "/bin", "SET": "from-env", "EMPTY": "", "X_1": "x"}
SECRETS = {"KEPT": "from-keyring", "SET": "never-this"}

texts = st.one_of(
    st.sampled_from(["", " ", "srv", "${SET}", "${KEPT}", "${NOPE}", "${NOPE:-dflt}", "a${X_1}b",
                     "${EMPTY:-d}", "$SET", "${lower}", "${SET:-}"]),
    st.text(max_size=6),
)  # fmt: skip
values = st.one_of(texts, st.integers(-2, 5), st.booleans(), st.none(), st.lists(texts, max_size=2))
# Each field mostly valid, sometimes not: a fully valid entry with one bad field is common.
bad = st.sampled_from([None, 0, True, [], {}, "", " ", "bogus", 3_600_001, ["${SET}", 1]])
str_map = st.dictionaries(st.sampled_from(["A", "TOK", "B=", ""]), texts, max_size=2)
fields = {
    "args": st.lists(texts, max_size=3),
    "env": str_map,
    "cwd": texts,
    "inherit_env": st.one_of(st.booleans(), st.lists(st.sampled_from(["X_1", "HOME", "1x"]))),
    "enabled": st.booleans(),
    "sensitive": st.booleans(),
    "timeout": st.sampled_from([1, 5000, 3_600_000, 0, -1, 3_600_001, 1.5]),
    "transport": st.sampled_from(["stdio", "sse", "streamable-http", "http"]),
    "protocol": st.sampled_from(["auto", "modern", "legacy", "bogus"]),
    "description": texts,
    "groups": st.lists(st.sampled_from(["dev", "a_b-9", "", "a b", "x" * 65]), max_size=2),
}
entries = st.fixed_dictionaries(
    {"command": st.one_of(texts, texts, bad)},
    optional={
        **{key: st.one_of(*[strategy] * 6, bad) for key, strategy in fields.items()},
        # Fields only the model reads: the quick reader leaves these entries to it.
        "url": st.just("https://example.com/mcp"),
        "tools": st.just({"deny": ["x"]}),
    },
)


@settings(max_examples=500, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["srv", "$schema", "bad name"]), data=entries)
def test_the_quick_reader_agrees_with_the_model(
    tmp_path: Path, name: str, data: dict[str, Any]
) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({name: data, "other": {"url": 5}}))
    quick = plain_entry(name, str(path), ENVIRON, SECRETS.get)
    if quick is None:
        return  # the full path decides
    entry, issues = entry_from_data(name, data)
    assert entry is not None, issues  # never starts what the model refuses
    assert entry.enabled and not entry.is_remote
    resolved = resolve_entry(name, entry, policy="error", environ=ENVIRON, secrets=SECRETS.get)
    assert resolved is not None
    run = resolved.entry
    assert quick.argv == [run.command, *run.args]
    assert quick.cwd == run.cwd
    assert {**quick.env} == {**run.env}
    assert server_env(quick.env, quick.inherit_env, ENVIRON) == child_env(run, ENVIRON)


def test_a_plain_entry_is_read_and_resolved(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"s": {"command": "${SET}", "args": ["${KEPT}", "${NOPE:-d}"],
                                      "env": {"A": "${SET}"}, "inherit_env": ["X_1"],
                                      "timeout": 5000, "description": "x"}}))  # fmt: skip
    quick = plain_entry("s", str(path), ENVIRON, SECRETS.get)
    assert quick is not None
    assert quick.argv == ["from-env", "from-keyring", "d"]
    assert quick.env == {"A": "from-env"}
    assert quick.inherit_env == ("X_1",)


def test_hostile_or_unusual_files_go_to_the_full_path(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert plain_entry("s", str(fifo), ENVIRON) is None  # does not block
    assert plain_entry("s", "/dev/zero", ENVIRON) is None
    assert plain_entry("s", str(tmp_path), ENVIRON) is None
    assert plain_entry("s", str(tmp_path / "missing.json"), ENVIRON) is None
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff{")
    assert plain_entry("s", str(bad), ENVIRON) is None
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    assert plain_entry("s", str(deep), ENVIRON) is None
    missing = tmp_path / "missing-var.json"
    missing.write_text(json.dumps({"s": {"command": "x", "env": {"A": "${NOPE}"}}}))
    assert plain_entry("s", str(missing), ENVIRON, SECRETS.get) is None

    def broken(name: str) -> str | None:
        raise RuntimeError("keyring down")

    assert plain_entry("s", str(missing), ENVIRON, broken) is None


@pytest.mark.parametrize(
    ("field", "value"),
    [("command", ""), ("command", " "), ("command", 5), ("args", "x"), ("args", [1]),
     ("env", []), ("env", {"A=B": "x"}), ("env", {"A": 1}), ("cwd", ""), ("cwd", 3),
     ("inherit_env", "yes"), ("inherit_env", ["1x"]), ("enabled", "yes"), ("enabled", False),
     ("sensitive", 1), ("timeout", 0), ("timeout", 3_600_001), ("timeout", 1.5),
     ("timeout", True), ("transport", "sse"), ("transport", "bogus"), ("protocol", "bogus"),
     ("description", 1), ("url", "https://example.com/mcp"), ("comand", "x"),
     ("groups", "dev"), ("groups", ["a b"]), ("groups", [1]), ("groups", [""])],
)  # fmt: skip
def test_what_the_model_refuses_or_will_not_run_is_left_to_it(
    tmp_path: Path, field: str, value: object
) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"srv": {"command": "srv", field: value}}))
    entry, _ = entry_from_data("srv", {"command": "srv", field: value})
    assert entry is None or not entry.enabled or entry.is_remote
    assert plain_entry("srv", str(path), ENVIRON) is None


def test_an_entry_in_groups_is_still_plain(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"s": {"command": "srv", "groups": ["dev", "work"]}}))
    quick = plain_entry("s", str(path), ENVIRON)
    assert quick is not None and quick.argv == ["srv"]


@pytest.mark.parametrize(
    ("field", "raw"),
    [
        ("command", '"a\\u0000b"'),
        ("args", '["x", "\\u0000"]'),
        ("args", '["\\ud800"]'),
        ("env", '{"A": "\\u0000"}'),
        ("env", '{"A\\ud800": "v"}'),
        ("cwd", '"/srv\\u0000"'),
    ],
)
def test_what_no_process_can_be_given_goes_to_the_full_path(
    tmp_path: Path, field: str, raw: str
) -> None:
    """A NUL or a lone surrogate: the model refuses the entry and says where; the quick
    reader must not hand it over instead."""
    path = tmp_path / "servers.json"
    command = raw if field == "command" else '"x"'
    extra = f', "{field}": {raw}' if field != "command" else ""
    path.write_text(f'{{"s": {{"command": {command}{extra}}}}}', encoding="utf-8")
    assert plain_entry("s", str(path), ENVIRON, SECRETS.get) is None
    entry, _ = entry_from_data("s", json.loads(path.read_text(encoding="utf-8"))["s"])
    if entry is not None:
        with pytest.raises(InvalidEntryError, match="which no process can be given"):
            resolve_entry("s", entry, policy="error", environ=ENVIRON)
    raw_name = tmp_path / "raw.json"
    raw_name.write_text('{"s": {"command": "x", "args": ["\\udc80"]}}', encoding="utf-8")
    quick = plain_entry("s", str(raw_name), ENVIRON)
    assert quick is not None and quick.argv == ["x", "\udc80"]  # a raw name's byte: passable


def test_the_working_dir_the_longest_timeout_and_the_trust_check(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    entry = {"command": "x", "cwd": "${HOME}/srv", "timeout": 3_600_000}
    path.write_text(json.dumps({"s": entry}))
    quick = plain_entry("s", str(path), ENVIRON)
    assert quick is not None and quick.cwd == "/home/u/srv"  # the model's longest timeout
    seen: list[object] = []

    def allowed(data: dict[str, object]) -> bool:
        seen.append(data)
        return True

    assert plain_entry("s", str(path), ENVIRON, allowed=allowed) is not None
    assert seen == [entry]  # the entry as written, before anything is resolved
    assert plain_entry("s", str(path), ENVIRON, allowed=lambda data: False) is None
