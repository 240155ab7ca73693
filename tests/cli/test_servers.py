"""add / remove / list / get / enable / disable / undo through the CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SERVERS, Cli, write_config

ORCHESTRATOR_FILE = {
    "posthog": {
        "command": "npx",
        "args": ["-y", "@anthropic/posthog-mcp"],
        "env": {"POSTHOG_HOST": "https://us.posthog.com", "POSTHOG_API_KEY": "${POSTHOG_API_KEY}"},
        "timeout": 15000,
        "sensitive": False,
        "description": "Product analytics and feature flags",
    }
}


def read(path: Path) -> dict:
    return json.loads(path.read_text())


def test_add_stdio_creates_file_with_the_original_fields(cli: Cli, config_path: Path) -> None:
    config_path.write_text("{}\n")
    r = cli(
        "add",
        "time",
        "--description",
        "Clock",
        "--timeout",
        "5s",
        "--",
        "uvx",
        "mcp-server-time",
        "--local-timezone=UTC",
    )
    assert r.exit_code == 0, r.stderr
    assert read(config_path) == {
        "time": {
            "command": "uvx",
            "args": ["mcp-server-time", "--local-timezone=UTC"],
            "timeout": 5000,
            "description": "Clock",
        }
    }
    assert "Added stdio server 'time'" in r.stderr
    assert r.stdout == ""


def test_add_without_any_file_creates_one_in_user_config_dir(
    cli: Cli, isolated: Path, tmp_path: Path
) -> None:
    r = cli("add", "a", "--", "echo")
    assert r.exit_code == 0, r.stderr
    created = tmp_path / "mcpctl-home" / "config" / "external-mcps.json"
    assert read(created) == {"a": {"command": "echo"}}
    assert f"Created {created}" in r.stderr


def test_add_remote_with_headers_and_transport(cli: Cli, config_path: Path) -> None:
    config_path.write_text("{}")
    r = cli("add", "docs", "--url", "https://example.com/sse", "--transport", "sse",
            "-H", "Authorization: Bearer ${DOCS_TOKEN}", "-H", "X-Team: core", "--json")  # fmt: skip
    assert r.exit_code == 0, r.stdout
    assert r.json["data"]["server"]["transport"] == "sse"
    assert read(config_path)["docs"] == {
        "url": "https://example.com/sse",
        "transport": "sse",
        "headers": {"Authorization": "Bearer ${DOCS_TOKEN}", "X-Team": "core"},
    }


def test_add_existing_fails_without_force(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"a": {"command": "echo"}})
    before = config_path.read_bytes()
    r = cli("add", "a", "--", "cat")
    assert r.exit_code == 2
    assert "already exists" in r.stderr and "--force" in r.stderr
    assert config_path.read_bytes() == before
    r = cli("add", "a", "--force", "--", "cat")
    assert r.exit_code == 0
    assert read(config_path) == {"a": {"command": "cat"}}
    assert "Replaced" in r.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["add", "bad name", "--", "x"], "may only contain"),
        (["add", "x" * 65, "--", "x"], "limit is 64"),
        (["add", "a"], "nothing to add"),
        (["add", "a", "--url", "https://x", "--", "cmd"], "not both"),
        (["add", "a", "--url", "ftp://x"], "http"),
        (["add", "a", "-H", "X: y", "--", "cmd"], "only applies to remote"),
        (["add", "a", "--url", "https://x", "-e", "A=b"], "only applies to stdio"),
        (["add", "a", "-e", "NOEQUALS", "--", "cmd"], "KEY=VALUE"),
        (["add", "a", "--url", "https://x", "-H", "NoColon"], "Name: value"),
        (["add", "a", "--timeout", "0", "--", "cmd"], "0"),
        (["add", "a", "--transport", "carrier-pigeon", "--url", "https://x"], "carrier-pigeon"),
    ],
)
def test_add_bad_input_exits_2_and_writes_nothing(
    cli: Cli, config_path: Path, args: list[str], needle: str
) -> None:
    config_path.write_text("{}\n")
    r = cli(*args)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert needle in r.stderr
    assert "Traceback" not in r.stderr
    assert config_path.read_text() == "{}\n"


def test_add_option_after_command_without_dashdash_hints(cli: Cli, config_path: Path) -> None:
    r = cli("add", "a", "npx", "-y", "pkg")
    assert r.exit_code == 2
    assert "put '--' before" in r.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["-e", "GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a", "--", "npx", "x"],
        ["--", "server", "--api-key", "sk-proj-4f9aA8c1B2d3E4f5G6h7J8k9L0"],
        ["--url", "https://x.example/mcp", "-H", "Authorization: Bearer abcDEF1234567890ghijKLMN"],
    ],
)
def test_add_refuses_literal_secrets_and_never_echoes_them(
    cli: Cli, config_path: Path, args: list[str]
) -> None:
    config_path.write_text("{}\n")
    r = cli("--json", "add", "s", *args)
    assert r.exit_code == 2
    assert r.json["errors"][0]["code"] == "plaintext_secret"
    secret = (
        next(a for a in args if any(p in a for p in ("ghp_", "sk-", "abcDEF")))
        .split()[-1]
        .split("=")[-1]
    )
    assert secret not in r.stdout + r.stderr
    assert config_path.read_text() == "{}\n"


def test_list_and_get_show_placeholders_and_redact_secrets(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {
        "$schema": "./schema.json",
        "gh": {"command": "npx", "args": ["-y", "server-github", "--token=ghp_16C7e42F292c6912E7710c838347Ae178B4a"],
               "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "DB_PASSWORD": "hunter2", "HOST": "https://api.github.com"}},
        "remote": {"url": "https://x.example/mcp", "headers": {"Authorization": "Bearer xoxb-123456789012-abcdefABCDEF"}},
    })  # fmt: skip
    r = cli("list", "--json")
    assert r.exit_code == 0
    servers = {s["name"]: s for s in r.json["data"]["servers"]}
    assert list(servers) == ["gh", "remote"]
    gh = servers["gh"]
    assert gh["env"] == {
        "GITHUB_TOKEN": "${GITHUB_TOKEN}",
        "DB_PASSWORD": "****",
        "HOST": "https://api.github.com",
    }
    assert gh["args"][-1] == "--token=****"
    assert servers["remote"]["headers"]["Authorization"] == "****"
    for out in (
        r.stdout,
        cli("list").stdout,
        cli("get", "gh").stdout,
        cli("get", "remote", "--json").stdout,
    ):
        assert "ghp_16C7" not in out and "hunter2" not in out and "xoxb-1234" not in out


def test_list_piped_is_tab_separated_without_header(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"a": {"command": "echo", "args": ["hi there"], "description": "A"},
                               "b": {"url": "https://b.example/mcp", "enabled": False}})  # fmt: skip
    r = cli("list")
    assert r.stdout.splitlines() == [
        "a\tstdio\tyes\techo 'hi there'\tA",
        "b\tstreamable-http\tno\thttps://b.example/mcp\t",
    ]
    assert cli("list", "--enabled").stdout.splitlines() == ["a\tstdio\tyes\techo 'hi there'\tA"]


def test_list_empty_and_missing_file(cli: Cli, config_path: Path) -> None:
    r = cli("list", "--json")
    assert r.exit_code == 0
    assert r.json["data"]["servers"] == [] and r.json["data"]["exists"] is False
    assert cli("list").stdout == ""


def test_list_skips_bad_entries_with_warnings(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"good": {"command": "echo"}, "bad": {"comand": "echo"}})
    r = cli("list", "--json")
    assert r.exit_code == 0
    assert [s["name"] for s in r.json["data"]["servers"]] == ["good"]
    assert any("did you mean 'command'" in w for w in r.json["warnings"])
    r = cli("list")
    assert "warning:" in r.stderr and r.stdout.startswith("good\t")
    assert cli("-q", "list").stderr == ""


@pytest.mark.parametrize(
    "command", [["list"], ["get", "a"], ["add", "b", "--", "x"], ["remove", "a"], ["disable", "a"]]
)
def test_invalid_json_file_exits_2_with_line_and_column(
    cli: Cli, config_path: Path, command: list[str]
) -> None:
    config_path.write_text('{\n  "a": {"command": "echo",}\n}\n')
    before = config_path.read_bytes()
    r = cli(*command)
    assert r.exit_code == 2
    assert f"{config_path}:2:" in r.stderr
    assert "Traceback" not in r.stderr
    assert config_path.read_bytes() == before
    rj = cli("--json", *command)
    assert rj.json["errors"][0]["code"] == "config_syntax"
    assert rj.json["ok"] is False


def test_get_unknown_suggests(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"github": {"command": "npx"}})
    r = cli("get", "githb", "--json")
    assert r.exit_code == 2
    assert r.json["errors"][0] == {
        "code": "server_not_found",
        "message": f"no server 'githb' in {config_path}",
        "hint": "did you mean 'github'?",
    }


def test_get_invalid_entry_is_exit_2(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"x": {"command": 5}})
    r = cli("get", "x")
    assert r.exit_code == 2 and "invalid" in r.stderr and "mcpctl validate" in r.stderr


def test_get_human_detail(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"t": {"command": "uvx", "args": ["mcp-server-time"], "tools": {"deny": ["convert_*"]},
                                     "source": {"registry": "official", "name": "io.x/time", "version": "1.0.0"}}})  # fmt: skip
    out = cli("get", "t").stdout
    assert "command:" in out and "uvx mcp-server-time" in out
    assert "deny convert_*" in out and "io.x/time@1.0.0 (official)" in out
    assert "timeout:" in out and "30000 ms" in out


def test_remove_is_all_or_nothing(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"a": {"command": "x"}, "b": {"command": "y"}, "c": {"command": "z"}})
    r = cli("remove", "a", "nope")
    assert r.exit_code == 2 and "nope" in r.stderr
    assert list(read(config_path)) == ["a", "b", "c"]
    r = cli("remove", "a", "c", "--json")
    assert r.exit_code == 0 and r.json["data"]["removed"] == ["a", "c"]
    assert list(read(config_path)) == ["b"]
    r = cli("remove", "b", "zzz", "--ignore-missing", "--json")
    assert r.json["data"]["removed"] == ["b"]
    assert read(config_path) == {}


def test_enable_disable_keep_file_minimal(cli: Cli, config_path: Path) -> None:
    write_config(config_path, ORCHESTRATOR_FILE)
    r = cli("disable", "posthog", "--json")
    assert r.json["data"] == {
        "config": str(config_path),
        "name": "posthog",
        "names": ["posthog"],
        "enabled": False,
        "changed": True,
        "changed_names": ["posthog"],
    }
    assert read(config_path)["posthog"]["enabled"] is False
    assert cli("disable", "posthog", "--json").json["data"]["changed"] is False
    cli("enable", "posthog")
    assert read(config_path) == ORCHESTRATOR_FILE
    assert cli("enable", "nope").exit_code == 2


def test_enable_disable_take_many_names_in_one_write_all_or_none(
    cli: Cli, config_path: Path
) -> None:
    original = {"alpha": {"command": "x"}, "beta": {"command": "y", "enabled": False},
                "gamma": {"command": "z"}}  # fmt: skip
    write_config(config_path, original)
    r = cli("disable", "alpha", "beta", "gamma", "alpha", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json["data"] == {
        "config": str(config_path), "enabled": False, "names": ["alpha", "beta", "gamma"],
        "changed": True, "changed_names": ["alpha", "gamma"],
    }  # fmt: skip
    assert all(entry["enabled"] is False for entry in read(config_path).values())
    # One write: one undo brings every server back as it was.
    assert cli("undo").exit_code == 0
    assert read(config_path) == original
    # An unknown name is a usage error, with the closest name, and nothing changes.
    r = cli("enable", "beta", "gama", "zzz", "--json")
    assert r.exit_code == 2
    (err,) = r.json["errors"]
    assert err["code"] == "server_not_found"
    assert err["message"] == f"no servers 'gama', 'zzz' in {config_path}"
    assert err["hint"] == "did you mean 'gamma'?"
    assert read(config_path) == original
    human = cli("enable", "alpha", "beta")
    assert human.exit_code == 0
    assert "'alpha' is already enabled" in human.stderr and "Enabled 'beta'" in human.stderr


def test_writes_preserve_order_dollar_keys_and_unknown_content(cli: Cli, config_path: Path) -> None:
    original = {"$schema": "https://example.com/s.json", "z": {"command": "z"},
                "weird": {"command": "w", "x-extension": {"keep": [1, 2]}}, "a": {"command": "a"}}  # fmt: skip
    write_config(config_path, original)
    cli("add", "m", "--", "m")
    data = read(config_path)
    assert list(data) == ["$schema", "z", "weird", "a", "m"]
    assert data["weird"] == original["weird"]
    text = config_path.read_text()
    assert text.endswith("}\n") and '\n  "z": {\n    "command": "z"\n  },' in text


def test_file_permissions_are_kept(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {})
    config_path.chmod(0o640)
    cli("add", "a", "--", "x")
    assert config_path.stat().st_mode & 0o777 == 0o640


def test_symlinked_config_updates_the_target(cli: Cli, isolated: Path) -> None:
    real = isolated / "real.json"
    write_config(real, {})
    (isolated / "external-mcps.json").symlink_to(real)
    assert cli("add", "a", "--", "x").exit_code == 0
    assert (isolated / "external-mcps.json").is_symlink()
    assert read(real) == {"a": {"command": "x"}}


def test_undo_walks_back_and_refuses_over_hand_edits(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {})
    cli("add", "a", "--", "x")
    cli("add", "b", "--", "y")
    r = cli("undo", "--list", "--json")
    assert [v["action"] for v in r.json["data"]["versions"]] == ["add b", "add a"]
    r = cli("undo", "--json")
    assert r.exit_code == 0 and r.json["data"]["undone"] == "add b"
    assert read(config_path) == {"a": {"command": "x"}}
    # A hand edit after mcpctl's last change is not thrown away silently.
    cli("add", "c", "--", "z")
    write_config(config_path, {"hand": {"command": "edited"}})
    r = cli("undo")
    assert r.exit_code == 2 and "--force" in r.stderr
    assert read(config_path) == {"hand": {"command": "edited"}}
    assert cli("undo", "--force").exit_code == 0
    assert read(config_path) == {"a": {"command": "x"}}
    assert cli("undo").exit_code == 0
    assert read(config_path) == {}
    r = cli("undo", "--json")
    assert r.exit_code == 2 and r.json["errors"][0]["code"] == "nothing_to_undo"


def test_undo_of_file_creation_removes_the_file(cli: Cli, config_path: Path) -> None:
    r = cli("--config", str(config_path), "add", "a", "--", "x")
    assert r.exit_code == 0 and config_path.exists()
    r = cli("--config", str(config_path), "undo")
    assert r.exit_code == 0 and not config_path.exists()


def test_backups_keep_only_the_last_20(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {})
    for i in range(23):
        cli("add", f"s{i}", "--", "x")
    history = cli("undo", "--list", "--json").json["data"]["versions"]
    assert len(history) == 20
    assert history[0]["action"] == "add s22" and history[-1]["action"] == "add s3"


@pytest.mark.parametrize("target", ["file", "dir"])
def test_read_only_file_or_directory_exits_3_and_changes_nothing(
    cli: Cli, config_path: Path, target: str
) -> None:
    write_config(config_path, {"a": {"command": "x"}})
    before = config_path.read_bytes()
    victim = config_path if target == "file" else config_path.parent
    mode = victim.stat().st_mode
    victim.chmod(0o444 if target == "file" else 0o555)
    try:
        for args in (["add", "b", "--", "y"], ["remove", "a"], ["disable", "a"]):
            r = cli("--json", *args)
            assert r.exit_code == 3, r.stdout
            assert r.json["errors"][0]["code"] == "read_only"
            assert "read-only" in r.json["errors"][0]["message"]
        assert config_path.read_bytes() == before
        leftovers = [p.name for p in config_path.parent.iterdir() if p.name.endswith(".tmp")]
        assert leftovers == []
    finally:
        victim.chmod(mode)


# --- input that used to go wrong silently --------------------------------------------


@pytest.mark.parametrize(
    ("value", "written", "warned"),
    [("30s", 30000, False), ("500ms", 500, False), ("2m", 120000, False), ("1.5s", 1500, False),
     ("1m", 60000, False), ("30", 30000, False), ("0.5", 500, False), ("100ms", 100, False),
     ("60m", 3600000, False), ("700", 700000, True)],
)  # fmt: skip
def test_add_timeout_bare_number_is_seconds_and_the_file_keeps_ms(
    cli: Cli, config_path: Path, value: str, written: int, warned: bool
) -> None:
    config_path.write_text("{}\n")
    r = cli("add", "t", "--timeout", value, "--json", "--", "echo")
    assert r.exit_code == 0, r.stdout
    assert read(config_path)["t"]["timeout"] == written  # the file keeps milliseconds
    notes = [w for w in r.json["warnings"] if "--timeout" in w]
    assert bool(notes) is warned
    if warned:
        assert "read as 700 s" in notes[0] and "700ms" in notes[0]


def test_add_timeout_means_what_health_timeout_means(cli: Cli, config_path: Path) -> None:
    # The same bare number, the same duration: add writes 1 s; health waits 1 s for it, as
    # health --timeout 1 does.
    config_path.write_text("{}\n")
    hang = [sys.executable, str(SERVERS / "misbehave.py"), "hang"]
    assert cli("add", "hang", "--timeout", "1", "--", *hang).exit_code == 0
    assert read(config_path)["hang"]["timeout"] == 1000
    for extra in ([], ["--timeout", "1"]):
        r = cli("health", *extra, "--json")
        assert r.json["data"]["mcps"][0]["error"]["message"] == "no answer within 1 s", r.stdout


@pytest.mark.parametrize(
    ("value", "needle"),
    [("abc", "is not a duration"), ("0", "more than zero"), ("0s", "more than zero"),
     ("-5", "more than zero"), ("-1", "more than zero"), ("10 parsecs", "is not a duration"),
     ("99ms", "under 100 ms"), ("0.05", "under 100 ms"), ("1ms", "under 100 ms"),
     ("61m", "over 60 minutes"), ("5h", "over 60 minutes"), ("30000", "30000ms")],
)  # fmt: skip
def test_add_bad_timeout_is_exit_2(cli: Cli, config_path: Path, value: str, needle: str) -> None:
    config_path.write_text("{}\n")
    r = cli("add", "t", "--timeout", value, "--", "echo")
    assert r.exit_code == 2 and f"--timeout {value!r}" in r.stderr, r.stderr
    assert needle in r.stderr and "Traceback" not in r.stderr
    assert config_path.read_text() == "{}\n"
    r = cli("add", "t", "--timeout", value, "--json", "--", "echo")
    assert r.exit_code == 2 and r.json["errors"][0]["code"] == "usage_error"


def test_add_empty_value_from_a_shell_expansion_warns(cli: Cli, config_path: Path) -> None:
    # add gh -e GITHUB_TOKEN="${GITHUB_TOKEN}" with the variable unset reaches us as "GITHUB_TOKEN="
    config_path.write_text("{}\n")
    r = cli("add", "gh", "-e", "GITHUB_TOKEN=", "--", "npx", "server-github")
    assert r.exit_code == 0
    assert "GITHUB_TOKEN is empty" in r.stderr and "-e GITHUB_TOKEN='${GITHUB_TOKEN}'" in r.stderr
    r = cli(
        "add", "docs", "--url", "https://x.example/mcp", "-H", "Authorization: Bearer ", "--json"
    )
    assert any("-H 'Authorization: Bearer ${AUTHORIZATION}'" in w for w in r.json["warnings"])
    r = cli("add", "ok", "-e", "MODE=fast", "--json", "--", "echo")
    assert not [w for w in r.json["warnings"] if "empty" in w]


def test_add_without_a_name_before_dashdash(cli: Cli, config_path: Path) -> None:
    config_path.write_text("{}\n")
    r = cli("add", "--", "true")
    assert r.exit_code == 2 and "missing NAME" in r.stderr and "mcpctl add NAME -- true" in r.stderr
    assert config_path.read_text() == "{}\n"
    # A server really named like a command is fine when the name comes before '--'.
    assert cli("add", "true", "--", "true").exit_code == 0


@pytest.mark.parametrize("command", [["list"], ["get", "x"], ["health"], ["tools"], ["outdated"]])
def test_a_named_config_that_does_not_exist_is_an_error(
    cli: Cli, tmp_path: Path, command: list[str]
) -> None:
    missing = tmp_path / "nowhere" / "typo.json"
    r = cli("--config", str(missing), *command, "--json")
    assert r.exit_code == 2, r.stdout
    assert r.json["errors"][0]["code"] == "config_not_found"
    assert str(missing) in r.json["errors"][0]["message"]
    # Not named: the default location may simply not exist yet.
    assert cli("list", "--json").exit_code == 0


def test_a_claude_desktop_file_is_recognised(cli: Cli, config_path: Path) -> None:
    write_config(config_path, {"mcpServers": {"fs": {"command": "npx", "args": ["-y", "x"]}}})
    r = cli("list", "--json")
    assert r.exit_code == 0 and r.json["data"]["servers"] == []
    assert any("Claude Desktop" in w and "top level" in w for w in r.json["warnings"])
    r = cli("validate", "--json")
    assert r.exit_code == 1
    codes = [p["code"] for p in r.json["data"]["problems"]]
    assert codes == ["wrapped_servers"]  # one clear problem, not a list of unknown fields
    assert r.json["errors"][0]["code"] == "wrapped_servers"
    # A server that is really named "servers" is just a server.
    write_config(config_path, {"servers": {"command": "echo"}})
    assert [s["name"] for s in cli("list", "--json").json["data"]["servers"]] == ["servers"]


def test_json_errors_are_worded_alike_everywhere(cli: Cli, config_path: Path) -> None:
    config_path.write_text('{\n  "a": {"command": "echo"},\n}\n')
    listed = cli("list", "--json").json["errors"][0]["message"]
    validated = cli("validate", "--json").json["data"]["problems"][0]["message"]
    assert "trailing comma" in listed and "trailing comma" in validated
    assert listed.endswith(validated)  # list adds file:line:column in front


def test_literal_secrets_are_refused_for_library_callers(config_path: Path) -> None:
    from mcpctl import ConfigStore, ServerEntry
    from mcpctl.config.model import AuthConfig
    from mcpctl.errors import PlaintextSecretError

    token = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
    store = ConfigStore(config_path)
    with pytest.raises(PlaintextSecretError) as info:
        store.add("gh", ServerEntry(command="npx", env={"GITHUB_TOKEN": token}))
    assert token not in info.value.message + str(info.value.hint)
    assert "${GITHUB_TOKEN}" in str(info.value.hint)
    with pytest.raises(PlaintextSecretError):  # a credential in auth is secret whatever it is
        store.add(
            "r", ServerEntry(url="https://x.example/mcp", auth=AuthConfig("bearer", token="hello"))
        )
    with pytest.raises(PlaintextSecretError):  # every write, not only add
        store.update(lambda doc: doc.update({"x": {"command": "s", "args": [token]}}), action="t")
    assert not config_path.exists()
    store.add("gh", ServerEntry(command="npx", env={"GITHUB_TOKEN": token}), allow_secrets=True)
    assert read(config_path)["gh"]["env"]["GITHUB_TOKEN"] == token
    # Entries a write does not touch are not held against it.
    store.add("other", ServerEntry(command="echo"))
    store.add(
        "placeholder",
        ServerEntry(url="https://x.example/mcp", auth=AuthConfig("bearer", token="${T}")),
    )


@pytest.mark.parametrize(
    "args",
    [
        ["-e", "DB_URL=postgres://admin:hunter2@db/app", "--", "server"],
        ["--url", "https://x.example/mcp", "--bearer", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"],
        ["--url", "https://x.example/mcp", "--bearer", "hello"],
    ],
)
def test_passwords_in_urls_and_literal_bearer_tokens_are_refused(
    cli: Cli, config_path: Path, args: list[str]
) -> None:
    config_path.write_text("{}\n")
    r = cli("--json", "add", "s", *args)
    assert r.exit_code == 2 and r.json["errors"][0]["code"] == "plaintext_secret"
    for secret in ("hunter2", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"):
        assert secret not in r.stdout + r.stderr
    assert config_path.read_text() == "{}\n"
    assert cli("add", "ok", "--url", "https://x.example/mcp", "--bearer", "${TOKEN}").exit_code == 0


def test_a_password_in_a_url_is_never_shown(cli: Cli, config_path: Path) -> None:
    write_config(
        config_path, {"db": {"command": "s", "env": {"DB_URL": "postgres://u:hunter2@db/x"}}}
    )
    for args in (["list", "--json"], ["get", "db"], ["get", "db", "--json"]):
        r = cli(*args)
        assert "hunter2" not in r.stdout + r.stderr and "postgres://u:****@db/x" in r.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--", "echo", "\x1b[2J"],
        ["-e", "MODE=\u202eevil", "--", "echo"],
        ["--description", "ok", "--", "ec\x9bho"],
    ],
)
def test_add_refuses_control_characters(cli: Cli, config_path: Path, args: list[str]) -> None:
    config_path.write_text("{}\n")
    r = cli("--json", "add", "s", *args)
    assert r.exit_code == 2 and r.json["errors"][0]["code"] == "invalid_entry"
    assert "\\x1b" in r.stdout or "\\u202e" in r.stdout or "\\x9b" in r.stdout
    assert config_path.read_text() == "{}\n"


@pytest.mark.parametrize(
    ("args", "auth"),
    [
        (["--auth", "bearer", "--token", "${T}"], {"type": "bearer", "token": "${T}"}),
        (["--bearer", "${T}"], {"type": "bearer", "token": "${T}"}),
        (["--auth", "header", "--auth-header", "X-Api-Key", "--auth-value", "${K}"],
         {"type": "header", "name": "X-Api-Key", "value": "${K}"}),
        (["--auth", "basic", "--username", "me", "--password", "${P}"],
         {"type": "basic", "username": "me", "password": "${P}"}),
        (["--auth", "oauth", "--scope", "read", "--scope", "write", "--client-id", "abc",
          "--client-secret", "${CS}", "--client-metadata-url", "https://app.example/client.json",
          "--callback-port", "8765"],
         {"type": "oauth", "scopes": ["read", "write"], "client_id": "abc", "client_secret": "${CS}",
          "client_metadata_url": "https://app.example/client.json", "callback_port": 8765}),
        (["--auth", "oauth"], {"type": "oauth"}),
    ],
)  # fmt: skip
def test_add_with_auth(
    cli: Cli, config_path: Path, args: list[str], auth: dict[str, object]
) -> None:
    config_path.write_text("{}\n")
    r = cli("add", "r", "--url", "https://x.example/mcp", *args)
    assert r.exit_code == 0, r.stderr
    assert read(config_path)["r"]["auth"] == auth


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--url", "https://x", "--token", "${T}"], "goes with --auth"),
        (["--url", "https://x", "--auth", "bearer"], "needs --token"),
        (["--url", "https://x", "--auth", "basic", "--username", "me"], "needs --password"),
        (["--url", "https://x", "--auth", "bearer", "--token", "${T}", "--scope", "r"], "--scope goes with --auth oauth"),
        (["--url", "https://x", "--auth", "magic"], "choose one of"),
        (["--url", "https://x", "--auth", "bearer", "--token", "hello"], "literal secret"),
        (["--url", "https://x", "--auth", "basic", "--username", "u", "--password", "hunter2"], "literal secret"),
        (["--auth", "oauth", "--", "cmd"], "only applies to remote"),
        (["--url", "https://x", "--bearer", "${T}", "--auth", "basic"], "--bearer is short for"),
    ],
)  # fmt: skip
def test_add_auth_mistakes(cli: Cli, config_path: Path, args: list[str], needle: str) -> None:
    config_path.write_text("{}\n")
    r = cli("add", "r", *args)
    assert r.exit_code == 2 and needle in r.stderr, r.stderr
    assert config_path.read_text() == "{}\n"


def test_writes_leave_nothing_beside_the_config(
    cli: Cli, config_path: Path, isolated: Path
) -> None:
    # The lock is in the state dir: a project's work tree holds the config and nothing else.
    git = shutil.which("git")
    if git is not None:
        subprocess.run([git, "init", "-q", str(isolated)], check=True, timeout=60)
    config_path.write_text("{}\n")
    assert cli("add", "a", "--", "echo").exit_code == 0
    assert cli("add", "b", "--url", "https://example.com/mcp").exit_code == 0
    assert cli("disable", "b").exit_code == 0
    assert cli("remove", "a").exit_code == 0
    assert cli("undo").exit_code == 0
    assert sorted(p.name for p in isolated.iterdir() if p.name != ".git") == ["external-mcps.json"]
    if git is not None:
        status = subprocess.run(
            [git, "status", "--porcelain", "--untracked-files=all"],
            cwd=isolated, capture_output=True, text=True, check=True, timeout=60,
        )  # fmt: skip
        assert status.stdout == "?? external-mcps.json\n"
    locks = Path(os.environ["MCPCTL_HOME"]) / "state" / "locks"
    # The config's lock, and the trust record's (the servers added are approved).
    assert [p.suffix for p in locks.iterdir()] == [".lock", ".lock"]


@pytest.mark.parametrize(
    ("args", "path", "value"),
    [
        (["-e", "BRAVE_API_KEY=mypassword123", "--", "npx", "x"], "brave.env.BRAVE_API_KEY",
         "mypassword123"),
        (["--url", "https://x.example/mcp", "-H", "Authorization: Bearer abc"],
         "brave.headers.Authorization", "abc"),
        (["--url", "https://x.example/mcp", "-H", "X-Api-Key: hunter2"], "brave.headers.X-Api-Key",
         "hunter2"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_add_refuses_a_literal_under_a_secret_name(
    cli: Cli, config_path: Path, args: list[str], path: str, value: str, json_flag: list[str]
) -> None:
    config_path.write_text("{}\n")
    r = cli(*json_flag, "add", "brave", *args)
    assert r.exit_code == 2
    out = r.stdout + r.stderr
    assert f"{path} holds a literal value; a key named like a secret must hold a ${{VAR}}" in out
    assert "mcpctl secret set" in out and "--allow-literal" in out
    assert value not in out
    if json_flag:
        assert r.json["errors"][0]["code"] == "plaintext_secret"
    assert config_path.read_text() == "{}\n"


def test_add_writes_placeholders_under_secret_names(cli: Cli, config_path: Path) -> None:
    config_path.write_text("{}\n")
    r = cli("add", "s", "-e", "BRAVE_API_KEY=${BRAVE_API_KEY}", "-e", "B_TOKEN=${B:-x}",
            "-e", "TOKENIZERS_PARALLELISM=false", "--", "npx", "x")  # fmt: skip
    assert r.exit_code == 0, r.stderr
    r = cli("add", "r", "--url", "https://x.example/mcp", "-H", "Authorization: Bearer ${TOKEN}")
    assert r.exit_code == 0, r.stderr
    assert read(config_path)["r"]["headers"] == {"Authorization": "Bearer ${TOKEN}"}


def test_allow_literal_keeps_a_non_secret_and_persists(cli: Cli, config_path: Path) -> None:
    config_path.write_text("{}\n")
    r = cli("add", "s", "-e", "GITHUB_PAT=not-a-secret", "--allow-literal", "GITHUB_PAT",
            "--", "npx", "x")  # fmt: skip
    assert r.exit_code == 0, r.stderr
    assert "warning" not in r.stderr  # the allowance is heeded by add's own checks too
    entry = read(config_path)["s"]
    assert entry["env"] == {"GITHUB_PAT": "not-a-secret"} and entry["allow_literal"] == [
        "GITHUB_PAT"
    ]
    assert cli("validate").exit_code == 0
    assert cli("disable", "s").exit_code == 0
    assert cli("get", "s", "--json").json["data"]["server"]["env"] == {"GITHUB_PAT": "not-a-secret"}
    r = cli("add", "t", "-e", "GITHUB_PAT=x", "--allow-literal", "OTHER", "--", "npx", "x")
    assert r.exit_code == 2 and "'OTHER'" in r.stderr


def test_validate_reports_literals_under_secret_names_and_loading_still_works(
    cli: Cli, config_path: Path
) -> None:
    write_config(config_path, {
        "brave": {"command": "npx", "env": {"BRAVE_API_KEY": "mypassword123"}},
        "ok": {"command": "npx", "env": {"MY_PAT": "plain"}, "allow_literal": ["MY_PAT"]},
    })  # fmt: skip
    r = cli("validate")
    assert r.exit_code == 1
    assert "brave.env.BRAVE_API_KEY holds a literal value" in r.stdout
    assert "[named_literal_secret]" in r.stdout and "mypassword123" not in r.stdout + r.stderr
    [problem] = cli("validate", "--json").json["data"]["problems"]
    assert (problem["code"], problem["path"]) == ("named_literal_secret", "brave.env.BRAVE_API_KEY")
    assert '"allow_literal": ["BRAVE_API_KEY"]' in problem["hint"]
    listed = cli("list", "--json")
    assert listed.exit_code == 0
    assert [s["name"] for s in listed.json["data"]["servers"]] == ["brave", "ok"]


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_the_error_never_masks_its_own_subject(
    cli: Cli, config_path: Path, json_flag: list[str]
) -> None:
    config_path.write_text("{}\n")
    # A server name that looks like a token (hf_...) made the whole path ****.
    token = "hf_abcdefghijklmnop1234567890"
    r = cli(*json_flag, "add", "hf_hub", "-e", f"HF_TOKEN={token}", "--", "npx", "x")
    assert r.exit_code == 2
    assert "hf_hub.env.HF_TOKEN looks like a literal secret" in r.stdout + r.stderr
    assert token not in r.stdout + r.stderr
    # A secret variable whose value is the server's name made the name ****.
    r = cli(*json_flag, "add", "myserver", "-e", "API_KEY=somevalue1", "--", "npx", "x",
            env={"MY_TOKEN": "myserver", "OTHER_TOKEN": "somevalue1"})  # fmt: skip
    assert r.exit_code == 2
    assert "myserver.env.API_KEY holds a literal value" in r.stdout + r.stderr
    assert "somevalue1" not in r.stdout + r.stderr
    # validate, in every format.
    write_config(config_path, {"hf_hub": {"command": "npx", "env": {"HF_TOKEN": token}}})
    for fmt in ("text", "json", "sarif", "github"):
        r = cli("validate", "--format", fmt)
        assert "hf_hub.env.HF_TOKEN" in r.stdout and token not in r.stdout, fmt


@pytest.mark.parametrize("command", [["list"], ["health"], ["tools"]])
def test_no_config_file_is_said_not_silent(cli: Cli, config_path: Path, command: list[str]) -> None:
    """Nothing to show is no error (exit 0, as gh and kubectl do), but it says why: which
    file would be used, and how to create it."""
    r = cli(*command)
    assert (r.exit_code, r.stdout) == (0, "")
    said = " ".join(r.stderr.split())
    assert "warning: no config file:" in said and "external-mcps.json does not exist" in said
    assert "'mcpctl add NAME -- COMMAND' creates it" in said
    data = cli(*command, "--json").json
    assert data["ok"] is True and data["errors"] == []
    (note,) = [w for w in data["warnings"] if w.startswith("no config file")]
    where = Path(note.split(": ", 1)[1].split(" does not exist")[0])
    assert where == isolated_home() / "config" / "external-mcps.json"
    # The file there: nothing more to say.
    write_config(config_path, {})
    assert cli(*command, "--json").json["warnings"] == []


def isolated_home() -> Path:
    return Path(os.environ["MCPCTL_HOME"])


def test_add_inherit_env_names_what_the_server_gets(
    cli: Cli, config_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(config_path, {})
    seen = tmp_path / "environ.json"
    server = [sys.executable, str(SERVERS / "misbehave.py"), "environ", str(seen)]
    r = cli("add", "s", "--inherit-env", "AWS_PROFILE", "--inherit-env", "KUBECONFIG",
            "--inherit-env", "AWS_PROFILE", "--json", "--", *server)  # fmt: skip
    assert r.exit_code == 0, r.stderr
    assert json.loads(config_path.read_text())["s"]["inherit_env"] == ["AWS_PROFILE", "KUBECONFIG"]
    monkeypatch.setenv("AWS_PROFILE", "work")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "not-for-this-server")
    assert cli("health", "s").exit_code == 0
    got = json.loads(seen.read_text())
    assert got["AWS_PROFILE"] == "work" and "AWS_SESSION_TOKEN" not in got


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--inherit-env", "not a name", "--", "npx", "x"], "is not an environment variable name"),
        (["--inherit-env", "A", "--url", "https://x.example/mcp"],
         "--inherit-env only applies to stdio servers"),
    ],
)  # fmt: skip
def test_add_inherit_env_mistakes(
    cli: Cli, config_path: Path, args: list[str], needle: str
) -> None:
    write_config(config_path, {})
    r = cli("add", "s", *args)
    assert r.exit_code == 2 and needle in r.stderr
    assert json.loads(config_path.read_text()) == {}
