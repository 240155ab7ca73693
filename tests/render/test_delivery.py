"""Secrets that reach every client: render's --secrets modes and mcpctl secret headers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.model import AuthConfig, ServerEntry
from mcpctl.render import render
from mcpctl.render.delivery import Launcher, resolved_headers, serve_entry
from tests.conftest import Cli, MemoryKeyring, write_config

KEPT = "kept-in-keyring-value-123"
CONFIG = {
    "kept": {"command": "srv", "args": ["--token", "${KEPT}"], "env": {"X": "1"}, "cwd": "/tmp"},
    "exported": {"command": "srv", "env": {"TOK": "${EXPORTED}"}},
    "plain": {"command": "plain-srv", "timeout": 5000},
    "remote": {"url": "https://mcp.example.com/mcp",
               "headers": {"X-Team": "core", "X-Key": "${KEPT}"}},
}  # fmt: skip


@pytest.fixture
def configured(
    config_path: Path, memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> Path:
    memory_keyring.set_password("mcpctl", "secret:KEPT", KEPT)
    monkeypatch.setenv("EXPORTED", "from-the-environment")
    monkeypatch.delenv("KEPT", raising=False)
    return write_config(config_path, CONFIG)


def servers(cli: Cli, target: str, *args: str) -> tuple[dict[str, Any], str]:
    r = cli("render", target, *args)
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    return doc.get("mcpServers", doc.get("servers", {})), r.stderr


def test_auto_runs_only_keyring_fed_stdio_servers_through_the_launcher(
    cli: Cli, configured: Path
) -> None:
    found, _ = servers(cli, "claude-code")
    assert found["kept"] == {"type": "stdio", "command": "mcpctl",
                             "args": ["run", "kept", "--config", str(configured)]}  # fmt: skip
    assert found["exported"]["env"] == {"TOK": "${EXPORTED}"}  # the client has it
    assert found["plain"]["command"] == "plain-srv"
    r = cli("render", "claude-code", "--json")
    assert r.json["data"]["secrets"] == "auto" and r.json["data"]["launched"] == ["kept"]
    assert KEPT not in r.stdout + r.stderr


def test_launcher_mode_runs_every_stdio_server_through_mcpctl(cli: Cli, configured: Path) -> None:
    found, _ = servers(cli, "cursor", "--secrets", "launcher")
    for name in ("kept", "exported", "plain"):
        assert found[name]["command"] == "mcpctl"
        assert found[name]["args"][:2] == ["run", name]
        assert "env" not in found[name]
    assert found["remote"]["url"] == "https://mcp.example.com/mcp"


def test_env_mode_leaves_placeholders_and_names_the_keyring_only_variable(
    cli: Cli, configured: Path
) -> None:
    found, stderr = servers(cli, "cursor", "--secrets", "env")
    assert found["kept"]["args"] == ["--token", "${env:KEPT}"]
    assert "kept: KEPT only in the keyring" in stderr and "--secrets launcher" in stderr
    assert "remote: headers.X-Key needs KEPT" in stderr


def test_inline_writes_values_and_is_the_old_flag(
    cli: Cli, configured: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out.json"
    for flags in (["--secrets", "inline"], ["--inline-secrets"]):
        r = cli("render", "claude-desktop", "-o", str(out), *flags)
        assert r.exit_code == 0, r.stderr
        assert KEPT in out.read_text() and out.stat().st_mode & 0o777 == 0o600
        assert KEPT not in r.stdout + r.stderr
    r = cli("render", "cursor", "--secrets", "launcher", "--inline-secrets")
    assert r.exit_code == 2 and "--inline-secrets is --secrets inline" in r.stderr
    r = cli("render", "cursor", "--secrets", "sideways")
    assert r.exit_code == 2 and "auto, launcher, env, inline" in r.stderr


def test_inline_install_into_a_git_work_tree_is_refused(
    cli: Cli, configured: Path, isolated: Path
) -> None:
    (isolated / ".git").mkdir()
    r = cli("render", "claude-code", "--install", "--scope", "project", "--secrets", "inline")
    assert (
        r.exit_code == 2
        and "git work tree" in r.stderr
        and "hint: use --secrets auto (the default): the file then holds no secret" in r.stderr
    )
    assert not (isolated / ".mcp.json").exists()
    r = cli("render", "claude-code", "--install", "--scope", "project")
    assert r.exit_code == 0, r.stderr
    text = (isolated / ".mcp.json").read_text()
    assert KEPT not in text and '"mcpctl"' in text


def test_remote_headers_from_the_keyring_per_client(cli: Cli, configured: Path) -> None:
    found, _ = servers(cli, "claude-code")
    remote = found["remote"]
    assert remote["headers"] == {"X-Team": "core"}  # the keyring-held one comes from the helper
    assert remote["headersHelper"] == f"mcpctl secret headers remote --config {configured}"
    found, stderr = servers(cli, "vscode")
    assert found["remote"]["headers"]["X-Key"] == "${input:KEPT}"
    doc = json.loads(cli("render", "vscode").stdout)
    assert {"type": "promptString", "id": "KEPT", "description": "KEPT for remote",
            "password": True} in doc["inputs"]  # fmt: skip
    assert "headers.X-Key" not in stderr
    _, stderr = servers(cli, "windsurf")
    assert "remote: headers.X-Key needs KEPT, which only the keyring holds" in stderr


def test_secret_headers_prints_the_resolved_headers_unredacted(cli: Cli, configured: Path) -> None:
    r = cli("secret", "headers", "remote")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout) == {"X-Team": "core", "X-Key": KEPT}
    r = cli("secret", "headers", "kept")
    assert r.exit_code == 2 and "stdio server" in r.stderr and "mcpctl run kept" in r.stderr
    r = cli("secret", "headers", "nope")
    assert r.exit_code != 0 and r.stdout == ""


def test_resolved_headers_fold_in_auth() -> None:
    entry = ServerEntry(url="https://x.example/mcp", headers={"A": "${A}"},
                        auth=__import__("mcpctl.config.model").config.model.AuthConfig(
                            "basic", username="u", password="${P}"))  # fmt: skip
    got = resolved_headers("r", entry, environ={"A": "a", "P": "p"})
    assert got == {"A": "a", "Authorization": "Basic dTpw"}


def test_the_launcher_names_its_config_home_relative(tmp_path: Path) -> None:
    home = tmp_path / "home"
    inside = Launcher.for_config(home / ".config" / "mcpctl" / "external-mcps.json", home)
    assert inside.run_args("s") == ("run", "s", "--config", "~/.config/mcpctl/external-mcps.json")
    assert inside.headers_command("s") == (
        "mcpctl secret headers s --config ~/.config/mcpctl/external-mcps.json"
    )
    outside = Launcher.for_config(tmp_path / "a b" / "x.json", home)
    assert outside.config == str(tmp_path / "a b" / "x.json")
    assert outside.headers_command("s").endswith(f"--config '{tmp_path}/a b/x.json'")


def test_library_callers_without_a_keyring_get_the_file_as_before() -> None:
    entries = {"s": ServerEntry(command="srv", env={"T": "${T}"})}
    rendered = render("claude-code", entries, environ={})
    assert json.loads(rendered.text)["mcpServers"]["s"]["env"] == {"T": "${T}"}
    rendered = render("claude-code", entries, environ={}, secrets={"T": "v"}.get)
    assert json.loads(rendered.text)["mcpServers"]["s"]["args"] == ["run", "s"]
    assert rendered.launched == ["s"]
    rendered = render("toolhive", entries, environ={}, secrets={"T": "v"}.get)
    assert rendered.launched == []  # a cluster keeps its own secret objects


def test_install_warns_for_each_server_the_client_will_not_start(
    cli: Cli, configured: Path, isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:/usr/bin:/bin")
    r = cli("render", "cursor", "--install", "--scope", "project", "--secrets", "env", "--json")
    assert r.exit_code == 0, r.stderr
    problems = [p for p in r.json["data"]["problems"] if p["kind"] != "command"]  # no "srv" here
    assert [(p["server"], p["kind"], p["variable"]) for p in problems] == [
        ("kept", "keyring", "KEPT"),
        ("remote", "keyring", "KEPT"),
    ]
    assert any("cursor will not start kept as mcpctl does" in w for w in r.json["warnings"])
    r = cli("render", "cursor", "--install", "--scope", "project", "--json")
    assert r.exit_code == 0, r.stderr
    found = [(p["server"], p["kind"]) for p in r.json["data"]["problems"]]
    # kept runs through mcpctl run now; Cursor has no way to the remote header's keyring value.
    assert found == [("exported", "command"), ("plain", "command"), ("remote", "keyring")]
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # a client that cannot find mcpctl
    r = cli("render", "cursor", "--install", "--scope", "project", "--secrets", "launcher")
    assert "cursor will not start kept as mcpctl does: command 'mcpctl' not found" in r.stderr


def _umask() -> int:
    import os

    mask = os.umask(0o22)
    os.umask(mask)
    return mask


# Clients that expand placeholders in their file themselves (the others pass them on as text).
EXPANDING = {"claude-code", "vscode", "cursor", "windsurf", "gemini", "roo-code", "continue",
             "opencode", "amp", "kiro", "qwen-code", "copilot-cli"}  # fmt: skip


@pytest.mark.parametrize("mode", ["auto", "launcher", "env", "inline"])
@pytest.mark.parametrize("target", sorted(EXPANDING | {"claude-desktop", "codex", "zed", "cline",
                                                       "lm-studio", "goose"}))  # fmt: skip
def test_each_client_and_transport_gets_the_documented_secrets_mode(
    cli: Cli, configured: Path, tmp_path: Path, target: str, mode: str
) -> None:
    from mcpctl.render.targets import get_target

    assert getattr(get_target(target).syntax, "spell", None) is not None or (
        target not in EXPANDING)  # fmt: skip
    out = tmp_path / "rendered"
    r = cli("render", target, "-o", str(out), "--secrets", mode, "--json")
    assert r.exit_code == 0, r.stderr
    said = r.stdout + r.stderr
    assert KEPT not in said and "from-the-environment" not in said  # no value, ever
    text, bits = out.read_text(), out.stat().st_mode & 0o777
    warnings = r.json["warnings"]
    launched = r.json["data"]["launched"]
    if mode == "inline":
        # Every placeholder resolved, whatever the client could expand: a file of secrets.
        assert KEPT in text and "from-the-environment" in text
        assert "KEPT" not in text and "EXPORTED" not in text
        assert bits == 0o600 and launched == []
        assert f"{out} holds secrets in clear text: it is written with mode 0600" in warnings
        itself = [w for w in warnings if "expands" in w and "itself" in w]
        assert bool(itself) == (target in EXPANDING), warnings
        out.chmod(0o644)  # up to date, but readable by others: made 0600 again
        r = cli("render", target, "-o", str(out), "--secrets", mode)
        assert r.exit_code == 0 and out.stat().st_mode & 0o777 == 0o600
        return
    assert KEPT not in text and bits == 0o666 & ~_umask()
    assert "holds secrets" not in json.dumps(warnings)
    # launcher: every stdio server; auto: the one whose value only the keyring holds; never
    # a remote one (a launcher cannot stand in for a URL).
    expected = {"launcher": ["kept", "exported", "plain"], "auto": ["kept"], "env": []}[mode]
    assert launched == expected
    for warning in warnings:
        if warning.startswith("remote: "):  # hints for a remote server name a mode that works
            assert "--secrets launcher" not in warning and "mcpctl run" not in warning, warning
    if mode == "env":  # and so do the reasons health --as and --install give for it
        from mcpctl.auth.secrets import keyring_source
        from mcpctl.render.clientcheck import check_as_client

        problems = check_as_client(target, out, secrets=keyring_source())
        assert any(p.server == "remote" for p in problems) or target == "vscode", problems
        for problem in problems:
            if problem.server == "remote":
                assert "--secrets launcher" not in problem.message, problem


def test_inline_install_writes_values_with_0600_and_says_so(
    cli: Cli, configured: Path, isolated: Path
) -> None:
    r = cli("render", "cursor", "--install", "--scope", "project", "--secrets", "inline")
    assert r.exit_code == 0, r.stderr
    path = isolated / ".cursor" / "mcp.json"
    assert KEPT in path.read_text() and path.stat().st_mode & 0o777 == 0o600
    assert f"{path} holds secrets in clear text: it is written with mode 0600" in r.stderr
    assert "Cursor expands ${env:VAR} itself" in r.stderr and KEPT not in r.stdout + r.stderr


# --- the parts, in-process ---------------------------------------------------------------


def keyring(**values: str) -> Any:
    return values.get


def test_the_launcher_keeps_what_mcpctl_reads_of_the_entry_and_drops_the_rest() -> None:
    from mcpctl.config.model import Source, ToolFilter
    from mcpctl.render.delivery import deliver

    entry = ServerEntry(
        command="srv", args=("--t", "${DL_KEPT}"), env={"E": "1"}, cwd="/srv", timeout=9000,
        protocol="legacy", sensitive=True, description="the server", enabled=False,
        tools=ToolFilter(allow=("read_*",)), source=Source("https://r.test", "io.x/srv", "1.0.0"),
    )  # fmt: skip
    got = deliver({"s": entry}, "auto", launcher=Launcher("/bin/mcpctl", "~/c.json"),
                  environ={}, secrets=keyring(DL_KEPT="v"), label="Cursor")  # fmt: skip
    assert got.entries["s"] == ServerEntry(
        command="/bin/mcpctl", args=("run", "s", "--config", "~/c.json"), timeout=9000,
        protocol="legacy", sensitive=True, description="the server", enabled=False,
        tools=ToolFilter(allow=("read_*",)), source=Source("https://r.test", "io.x/srv", "1.0.0"),
    )  # fmt: skip
    assert got.launched == ["s"] and got.keyring_vars == {"DL_KEPT"} and got.notes == []


def test_deliver_by_mode() -> None:
    from mcpctl.render.delivery import deliver

    entries = {  # a remote server first: the ones after it are decided all the same
        "first": ServerEntry(url="https://x.test/first"),
        "kept": ServerEntry(command="a", env={"T": "${DL_KEPT}"}),
        "exported": ServerEntry(command="b", args=("${DL_EXPORTED}",)),
        "remote": ServerEntry(url="https://x.test/mcp", headers={"K": "${DL_KEPT}"}),
        "auth": ServerEntry(url="https://x.test/mcp", auth=AuthConfig("bearer", token="${DL_T}")),
    }
    common: dict[str, Any] = {
        "launcher": Launcher(), "environ": {"DL_EXPORTED": "e"}, "label": "Cursor",
        "secrets": keyring(DL_KEPT="k", DL_EXPORTED="k2", DL_T="t"),
    }  # fmt: skip
    auto = deliver(entries, "auto", **common)
    assert auto.launched == ["kept"] and auto.keyring_vars == {"DL_KEPT", "DL_T"}
    assert auto.entries["remote"] == entries["remote"] and auto.notes == []
    assert deliver(entries, "launcher", **common).launched == ["kept", "exported"]
    inline = deliver({"plain": ServerEntry(command="p"), **entries}, "inline", **common)
    assert inline.launched == [] and inline.notes == []
    assert inline.entries == {"plain": ServerEntry(command="p"), **entries}
    env = deliver(entries, "env", **common)
    assert env.launched == [] and env.entries == entries
    assert env.notes == [
        "kept: DL_KEPT only in the keyring: Cursor reads placeholders from its own "
        "environment, where they are not set (--secrets launcher runs the server through mcpctl)"
    ]
    bare = deliver(entries, "env", **common, expands=False)
    assert bare.notes == [
        "kept: DL_KEPT only in the keyring: Cursor expands no placeholder (--secrets launcher "
        "runs the server through mcpctl)"
    ]


def test_a_keyring_that_cannot_be_asked_holds_nothing_for_rendering() -> None:
    from mcpctl.errors import KeyringUnavailableError
    from mcpctl.render.delivery import deliver

    def unreachable(var: str) -> str | None:
        raise KeyringUnavailableError("no keyring here")

    got = deliver({"s": ServerEntry(command="a", env={"T": "${DL_KEPT}"})}, "auto",
                  launcher=Launcher(), environ={}, secrets=unreachable, label="Cursor")  # fmt: skip
    assert got.launched == [] and got.keyring_vars == frozenset()


def test_placeholders_are_found_in_every_field_a_server_reads() -> None:
    from mcpctl.render.delivery import deliver, entry_texts

    entry = ServerEntry(
        command="${A1}", args=("${A2}",), env={"E": "${A3}"}, cwd="${A4}", url=None,
    )  # fmt: skip
    remote = ServerEntry(url="https://${A5}/", headers={"H": "${A6}"},
                         auth=AuthConfig("basic", username="${A7}", password="${A8}"))  # fmt: skip
    header = ServerEntry(url="https://x/", auth=AuthConfig("header", name="K", value="${A9}"))
    bearer = ServerEntry(url="https://x/", auth=AuthConfig("bearer", token="${A10}"))
    texts = [t for e in (entry, remote, header, bearer) for t in entry_texts(e)]
    names = {f"A{i}" for i in range(1, 11)}
    assert names <= {t[2:-1] for t in texts if t.startswith("${")} | {"A5"}
    got = deliver({"s": entry, "r": remote, "h": header, "b": bearer}, "env",
                  launcher=Launcher(), environ={}, secrets=keyring(**dict.fromkeys(names, "v")),
                  label="Cursor")  # fmt: skip
    assert got.keyring_vars == names
    assert got.notes == ["s: A1, A2, A3, A4 only in the keyring: Cursor reads placeholders "
                         "from its own environment, where they are not set (--secrets launcher "
                         "runs the server through mcpctl)"]  # fmt: skip


def test_inline_resolves_every_placeholder_and_says_when_the_client_could() -> None:
    from mcpctl.errors import PlaceholderError
    from mcpctl.render.delivery import inline

    entries = {
        "s": ServerEntry(command="a", env={"T": "${DL_KEPT}", "E": "${DL_ENV}"}),
        "r": ServerEntry(url="https://x.test/mcp", headers={"K": "${DL_KEPT}"}),
        "plain": ServerEntry(command="p", args=("${}",)),
    }
    got = inline(entries, environ={"DL_ENV": "e"}, secrets=keyring(DL_KEPT="k"),
                 label="Cursor", expands="${env:VAR}")  # fmt: skip
    assert got.entries["s"].env == {"T": "k", "E": "e"}
    assert got.entries["r"].headers == {"K": "k"} and got.entries["plain"] is entries["plain"]
    assert got.holds_secrets and got.launched == []
    assert got.notes == [
        "--secrets inline wrote the values, though Cursor expands ${env:VAR} itself: "
        "--secrets env (or auto) keeps them out of the file"
    ]
    quiet = inline(entries, environ={"DL_ENV": "e"}, secrets=keyring(DL_KEPT="k"),
                   label="Goose", expands=None)  # fmt: skip
    assert quiet.holds_secrets and quiet.notes == []
    none = inline({"plain": entries["plain"]}, environ={}, secrets=None, label="C", expands="x")
    assert not none.holds_secrets and none.notes == []
    with pytest.raises(PlaceholderError, match="'s'"):  # no value anywhere: the server named
        inline({"s": entries["s"]}, environ={}, secrets=None, label="C", expands=None)


def test_inline_reads_only_the_environment_it_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpctl.render.delivery import inline

    monkeypatch.delenv("DL_GIVEN", raising=False)
    got = inline({"s": ServerEntry(command="a", env={"T": "${DL_GIVEN}"})},
                 environ={"DL_GIVEN": "g"}, secrets=None, label="C", expands=None)  # fmt: skip
    assert got.entries["s"].env == {"T": "g"}


@pytest.mark.parametrize(
    ("client", "remote", "var", "fix"),
    [
        ("cursor", False, None, "render with --secrets launcher"),
        ("claude-code", True, "T", "render with --secrets auto: Claude Code's headersHelper "
         "then asks mcpctl for it"),
        ("vscode", True, "T", "render with --secrets auto: VS Code then asks for it as a "
         "password input"),
        ("cursor", True, "T", "export T in the environment Cursor starts from, or render "
         "with --secrets inline (the file then holds the value, mode 0600); a launcher "
         "cannot reach a remote server"),
        ("cursor", True, None, "set it in the environment Cursor starts from, or render "
         "with --secrets inline (the file then holds the value, mode 0600); a launcher "
         "cannot reach a remote server"),
    ],
)  # fmt: skip
def test_keyring_fix_names_each_clients_way(
    client: str, remote: bool, var: str | None, fix: str
) -> None:
    from mcpctl.render.delivery import keyring_fix
    from mcpctl.render.targets import get_target

    assert keyring_fix(get_target(client), remote, var) == fix


def test_keyring_fix_for_a_client_named_by_a_string() -> None:
    from mcpctl.render.delivery import keyring_fix

    assert keyring_fix("Some Client", True, "T").startswith(
        "export T in the environment Some Client starts from"
    )


def test_resolved_headers_of_each_auth() -> None:
    env = {"DL_T": "tok"}
    url = "https://x.test/mcp"

    def headers(auth: AuthConfig | None) -> dict[str, str]:
        return resolved_headers("r", ServerEntry(url=url, headers={"A": "1"}, auth=auth),
                                environ=env)  # fmt: skip

    assert headers(None) == {"A": "1"}
    assert headers(AuthConfig("bearer", token="${DL_T}")) == {
        "A": "1",
        "Authorization": "Bearer tok",
    }
    assert headers(AuthConfig("bearer")) == {"A": "1"}
    assert headers(AuthConfig("header", name="X-Key", value="${DL_T}")) == {
        "A": "1",
        "X-Key": "tok",
    }
    assert headers(AuthConfig("header", value="v")) == {"A": "1", "Authorization": "v"}
    assert headers(AuthConfig("header", name="X-Key")) == {"A": "1"}
    assert headers(AuthConfig("basic", username="u")) == {"A": "1", "Authorization": "Basic dTo="}
    assert headers(AuthConfig("basic", password="p")) == {"A": "1", "Authorization": "Basic OnA="}
    assert headers(AuthConfig("oauth")) == {"A": "1"}


def test_resolved_headers_need_every_value_and_read_only_the_environment_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcpctl.errors import PlaceholderError, UsageError

    monkeypatch.delenv("DL_GIVEN", raising=False)
    entry = ServerEntry(url="https://x.test/mcp", headers={"K": "${DL_GIVEN}"})
    assert resolved_headers("r", entry, environ={"DL_GIVEN": "g"}) == {"K": "g"}
    assert resolved_headers("r", entry, secrets={"DL_GIVEN": "s"}.get) == {"K": "s"}
    with pytest.raises(PlaceholderError, match="DL_GIVEN") as caught:
        resolved_headers("r", entry, environ={})
    assert "'r'" in caught.value.message
    with pytest.raises(UsageError) as refused:
        resolved_headers("s", ServerEntry(command="x"))
    assert refused.value.message == "s is a stdio server: it has no HTTP headers"
    assert refused.value.hint == "a client starts it with: mcpctl run s"


def test_the_launcher_without_a_config_names_none(tmp_path: Path) -> None:
    plain = Launcher()
    assert plain.run_args("s") == ("run", "s")
    assert plain.headers_command("s") == "mcpctl secret headers s"
    odd = Launcher("/opt/my tools/mcpctl", "~/a b/c.json")
    assert (
        odd.headers_command("s")
        == "'/opt/my tools/mcpctl' secret headers s --config '~/a b/c.json'"
    )
    assert Launcher(config="~x/c.json").headers_command("s").endswith("--config '~x/c.json'")


def test_the_launcher_names_a_relative_or_home_config_in_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "w").mkdir(parents=True)
    monkeypatch.chdir(home / "w")
    monkeypatch.setenv("HOME", str(home))
    assert Launcher.for_config(Path("c.json")).config == "~/w/c.json"  # the home by default
    assert Launcher.for_config(Path("~/x.json"), home).config == "~/x.json"
    assert Launcher.for_config(home, home).config == str(home)  # the home itself: no "~/"
    assert Launcher.for_config(Path("c.json"), tmp_path / "else").config == str(
        home / "w" / "c.json"
    )
    assert Launcher.for_config(Path("c.json")).program == "mcpctl"


def test_the_serve_entry_says_what_it_is(tmp_path: Path) -> None:
    own = tmp_path / "own.json"
    me = serve_entry(own, own, program="/bin/mcpctl")
    assert me == ServerEntry(
        command="/bin/mcpctl", args=("serve",),
        description="mcpctl: this agent's MCP servers (list, health, doctor, tools, search)",
    )  # fmt: skip
    assert serve_entry(Path("~/own.json"), Path.home() / "own.json").args == ("serve",)
    other = Path.home() / "agents" / "external-mcps.json"
    assert serve_entry(other, own, allow_changes=True) == ServerEntry(
        command="mcpctl", args=("serve", "--config", "~/agents/external-mcps.json",
                                "--allow-changes"),
        description="mcpctl: this agent's MCP servers (list, health, doctor, tools, search)",
    )  # fmt: skip
    home = tmp_path / "home"
    assert serve_entry(home / "c.json", own, home=home).args == ("serve", "--config", "~/c.json")


def test_a_git_work_tree_is_found_from_a_folder_or_file_named_git(tmp_path: Path) -> None:
    from mcpctl.render.delivery import in_git_work_tree

    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    assert not in_git_work_tree(repo / "sub" / "x.json")
    (repo / ".git").write_text("gitdir: elsewhere\n")  # a worktree's or submodule's
    assert in_git_work_tree(repo / "sub" / "x.json") and in_git_work_tree(repo / "x.json")
    assert not in_git_work_tree(tmp_path / "x.json")
