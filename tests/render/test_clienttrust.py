"""The trust of a client's config file, in-process: what a server's approval covers, which
client a file is, the user's own files, and what ``mcpctl trust`` shows and approves.
(The commands themselves: tests/cli/test_trust.py and tests/cli/test_health_as.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpctl.config.model import ServerEntry
from mcpctl.config.trust import TrustStore
from mcpctl.config.trustrecord import canonical, digest_of, entry_digest
from mcpctl.errors import ConfigNotFoundError, UntrustedConfigError, UsageError
from mcpctl.render.base import Places
from mcpctl.render.clientfile import ClientEntry, ClientView, read_client
from mcpctl.render.clienttrust import (
    client_digest,
    client_of,
    client_trust,
    client_views,
    detect_client,
    is_users_own,
    require_client_trusted,
    review,
    trust_client,
)

LIT = "MCPCTL_AS_CLIENT_LITERAL_0"


def store_in(tmp_path: Path, **environ: str) -> TrustStore:
    """A record of its own; ``environ`` instead of the process's (no MCPCTL_TRUST, no CI)."""
    return TrustStore(tmp_path / "state" / "trust.json", config_dir=tmp_path / "config",
                      environ=environ)  # fmt: skip


def places(tmp_path: Path) -> Places:
    return Places(tmp_path / "home", tmp_path / "project", "linux", {})


def write(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def item(entry: ServerEntry, literals: dict[str, str] | None = None, **kw: Any) -> ClientEntry:
    return ClientEntry("s", entry, literals or {}, **kw)


# --- what an approval covers ------------------------------------------------------------


def test_a_literal_is_digested_as_the_text_the_server_gets() -> None:
    """A placeholder the client passes on as written counts as its text, wherever it is."""
    as_written = ServerEntry(command="run", args=("--tag", "${X}"), env={"A": "${Y}"})
    spelled = ServerEntry(command="run", args=("--tag", f"${{{LIT}}}"), env={"A": "${Y}"})
    assert client_digest(item(spelled, {LIT: "${X}"})) == client_digest(item(as_written))
    in_env = ServerEntry(command="run", env={"A": f"pre-${{{LIT}}}"})
    assert client_digest(item(in_env, {LIT: "${Y}"})) == client_digest(
        item(ServerEntry(command="run", env={"A": "pre-${Y}"}))
    )
    remote = ServerEntry(url="https://x.test/mcp", headers={"H": f"${{{LIT}}}"})
    assert client_digest(item(remote, {LIT: "v"})) == client_digest(
        item(ServerEntry(url="https://x.test/mcp", headers={"H": "v"}))
    )


def test_a_changed_literal_or_helper_changes_the_digest() -> None:
    entry = ServerEntry(command="run", args=(f"${{{LIT}}}",))
    one = client_digest(item(entry, {LIT: "a"}))
    assert one != client_digest(item(entry, {LIT: "b"}))
    assert one != client_digest(item(entry))  # not a literal: the placeholder itself
    remote = ServerEntry(url="https://x.test/mcp")
    plain = client_digest(item(remote))
    helped = client_digest(item(remote, headers_helper="echo {}"))
    assert len({plain, helped, client_digest(item(remote, headers_helper="echo '{}'"))}) == 3
    assert client_digest(item(remote, headers_helper="echo {}")) == helped


def test_a_client_server_is_digested_as_an_mcpctl_server_with_its_helper() -> None:
    """Approvals recorded before stay valid: the digest is that of the entry's covered fields
    (as for a server of an mcpctl config), with the headers helper under its own key."""
    remote = ServerEntry(url="https://x.test/mcp", headers={"A": "b"})
    assert client_digest(item(remote)) == entry_digest(remote.to_data())
    expected = digest_of({**canonical(remote.to_data()), "headers_helper": "print-h"})
    assert client_digest(item(remote, headers_helper="print-h")) == expected


def test_a_placeholder_the_client_expands_is_digested_as_written() -> None:
    entry = ServerEntry(command="run", args=("${TOKEN}", "${lower}"), env={"N": "5"})
    assert client_digest(item(entry, {LIT: "unused"})) == client_digest(item(entry))


# --- which file is whose -----------------------------------------------------------------


def test_a_clients_user_file_is_the_users_own(tmp_path: Path) -> None:
    where = places(tmp_path)
    own = write(where.home / ".cursor" / "mcp.json", {"mcpServers": {}})
    project = write(where.cwd / ".cursor" / "mcp.json", {"mcpServers": {}})
    assert is_users_own("cursor", own, where)
    assert not is_users_own("cursor", project, where)
    assert not is_users_own("vscode", own, where)  # another client's file
    link = tmp_path / "link.json"
    link.symlink_to(own)
    assert is_users_own("cursor", link, where)  # the file, wherever it is reached from


def test_the_users_own_file_defaults_to_this_machines_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    own = write(tmp_path / "home" / ".cursor" / "mcp.json", {"mcpServers": {}})
    assert is_users_own("cursor", own)


@pytest.mark.parametrize(
    ("relative", "client"),
    [(".cursor/mcp.json", "cursor"), (".vscode/mcp.json", "vscode"), (".mcp.json", "claude-code"),
     ("sub/deeper/.roo/mcp.json", "roo-code"), ("mcp.json", None), (".cursor/other.json", None)],
)  # fmt: skip
def test_a_project_file_says_its_client_by_its_path(
    tmp_path: Path, relative: str, client: str | None
) -> None:
    file = write(tmp_path / "repo" / relative, {})
    assert detect_client(file) == client
    assert client_of(file) == client


def test_a_file_reached_through_a_link_is_the_clients_by_its_real_path(tmp_path: Path) -> None:
    file = write(tmp_path / "repo" / ".cursor" / "mcp.json", {})
    link = tmp_path / "anywhere.json"
    link.symlink_to(file)
    assert detect_client(link) == "cursor"


def test_an_mcpctl_config_is_no_clients_and_as_client_wins(tmp_path: Path) -> None:
    config = write(tmp_path / ".cursor" / "external-mcps.json", {})
    assert client_of(config) is None  # mcpctl's own file name, wherever it is
    assert client_of(config, "vscode") == "vscode"
    assert client_of(tmp_path / ".mcp.json", "cursor") == "cursor"
    with pytest.raises(UsageError, match="'cursr' is not a client") as caught:
        client_of(config, "cursr")
    assert "did you mean 'cursor'?" in (caught.value.hint or "")


# --- trust of a client's file ------------------------------------------------------------


def view_of(tmp_path: Path, servers: dict[str, Any], where: Path | None = None) -> ClientView:
    file = write(where or tmp_path / "project" / ".cursor" / "mcp.json", {"mcpServers": servers})
    return read_client("cursor", file, places(tmp_path))


SERVERS = {"a": {"command": "run-a"}, "b": {"command": "run-b", "disabled": True}}


def test_a_project_file_waits_for_approval_and_is_then_trusted(tmp_path: Path) -> None:
    store, view = store_in(tmp_path), view_of(tmp_path, SERVERS)
    status = client_trust(view, store, places(tmp_path))
    assert status.reason is None and status.client == "cursor"
    assert {n: s.state for n, s in status.servers.items()} == {"a": "new", "b": "new"}
    with pytest.raises(UntrustedConfigError) as caught:
        require_client_trusted(view, store, places(tmp_path))
    assert list(caught.value.names) == ["a"]  # the enabled one only
    assert f"'mcpctl trust --as cursor {view.file}'" in caught.value.message
    assert trust_client(view, store) == ["a", "b"]
    assert trust_client(view, store) == []
    require_client_trusted(view, store, places(tmp_path))
    status = client_trust(view, store, places(tmp_path))
    assert {n: s.state for n, s in status.servers.items()} == {"a": "trusted", "b": "trusted"}
    assert store.files()[0].client == "cursor"


def test_a_disabled_server_alone_refuses_nothing(tmp_path: Path) -> None:
    view = view_of(tmp_path, {"b": {"command": "run-b", "disabled": True}})
    require_client_trusted(view, store_in(tmp_path), places(tmp_path))


def test_a_change_of_a_server_asks_again(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    trust_client(view_of(tmp_path, SERVERS), store)
    changed = view_of(tmp_path, {**SERVERS, "a": {"command": "run-a", "args": ["--more"]}})
    status = client_trust(changed, store, places(tmp_path))
    assert status.servers["a"].state == "changed" and status.servers["b"].state == "trusted"
    with pytest.raises(UntrustedConfigError) as caught:
        require_client_trusted(changed, store, places(tmp_path))
    assert list(caught.value.names) == ["a"]


def test_the_users_own_client_file_is_trusted_as_own(tmp_path: Path) -> None:
    own = view_of(tmp_path, SERVERS, tmp_path / "home" / ".cursor" / "mcp.json")
    store = store_in(tmp_path)
    status = client_trust(own, store, places(tmp_path))
    assert status.reason == "own" and status.trusted
    require_client_trusted(own, store, places(tmp_path))


def test_what_the_environment_trusts_keeps_its_reason(tmp_path: Path) -> None:
    own = view_of(tmp_path, SERVERS, tmp_path / "home" / ".cursor" / "mcp.json")
    store = store_in(tmp_path, MCPCTL_TRUST="1")
    status = client_trust(own, store, places(tmp_path))
    assert status.reason == "MCPCTL_TRUST=1" and status.servers == {}
    shown = client_trust(own, store, places(tmp_path), always=True)  # what mcpctl trust shows
    assert shown.reason == "MCPCTL_TRUST=1"
    assert {n: s.state for n, s in shown.servers.items()} == {"a": "new", "b": "new"}


def test_what_approval_shows_a_literal_as_written_and_no_secret(tmp_path: Path) -> None:
    servers = {
        "s": {"command": "run", "args": ["${RAW}", "${env:TOKEN}"], "env": {"E": "${RAW}"}},
        "r": {"url": "https://x.test/${RAW}", "headers": {"H": "${RAW}"}},
        "t": {"command": "plain"},
    }  # fmt: skip
    store, view = store_in(tmp_path), view_of(tmp_path, servers)
    trust_client(view_of(tmp_path, {"t": {"command": "plain"}}), store)
    status = client_trust(view, store, places(tmp_path), always=True)
    shown = {v.name: v for v in client_views(view, status)}
    assert shown["s"].runs == "run '${RAW}' '${TOKEN}'"
    assert (shown["s"].connects, shown["s"].cwd, shown["s"].env) == (None, None, ("E",))
    assert (shown["r"].runs, shown["r"].transport, shown["r"].cwd) == (
        None, "streamable-http", None)  # fmt: skip
    assert shown["s"].secrets == ("TOKEN",)  # ${RAW} is text the server gets, no secret
    assert shown["r"].connects == "https://x.test/${RAW}"
    assert shown["r"].secrets == () and shown["r"].headers == ("H",)
    assert (shown["s"].state, shown["t"].state) == ("new", "trusted")


def test_what_approval_shows_a_literal_in_a_working_dir_as_written(tmp_path: Path) -> None:
    file = write(tmp_path / "project" / ".vscode" / "mcp.json", {"servers": {
        "s": {"command": "${RAW}", "cwd": "/srv/${RAW}"}}})  # fmt: skip
    view = read_client("vscode", file, places(tmp_path))
    status = client_trust(view, store_in(tmp_path), places(tmp_path), always=True)
    (shown,) = client_views(view, status)
    assert (shown.runs, shown.cwd, shown.secrets) == ("'${RAW}'", "/srv/${RAW}", ())


def test_a_server_the_status_does_not_know_is_new(tmp_path: Path) -> None:
    view = view_of(tmp_path, {"t": {"command": "plain"}})
    status = client_trust(view, store_in(tmp_path, MCPCTL_TRUST="1"), places(tmp_path))
    assert status.servers == {}
    assert [v.state for v in client_views(view, status)] == ["new"]


def test_what_approval_shows_the_headers_helper(tmp_path: Path) -> None:
    mcp = write(tmp_path / "project" / ".mcp.json", {"mcpServers": {
        "hooked": {"type": "http", "url": "https://x.test/mcp", "headersHelper": "print-h"}}})  # fmt: skip
    view = read_client("claude-code", mcp, places(tmp_path))
    status = client_trust(view, store_in(tmp_path), places(tmp_path), always=True)
    (shown,) = client_views(view, status)
    assert shown.helper == "print-h" and shown.runs is None


# --- mcpctl trust's review ---------------------------------------------------------------


def test_review_of_a_clients_file_approves_it_for_that_client(tmp_path: Path) -> None:
    file = write(tmp_path / "repo" / ".cursor" / "mcp.json", {"mcpServers": SERVERS})
    store = store_in(tmp_path)
    status, views, approve = review(store, file)
    assert status.client == "cursor" and [v.name for v in views] == ["a", "b"]
    assert [v.state for v in views] == ["new", "new"]
    assert approve() == ["a", "b"]
    assert store.files()[0].client == "cursor"
    status, views, _ = review(store, file, "cursor")
    assert [v.state for v in views] == ["trusted", "trusted"]


def test_review_names_the_client_by_its_canonical_name(tmp_path: Path) -> None:
    file = write(tmp_path / "any.json", {"mcpServers": {"a": {"command": "run-a"}}})
    status, _, _ = review(store_in(tmp_path), file, "cursor")
    assert status.client == "cursor"


def test_review_of_a_missing_client_file_says_so(tmp_path: Path) -> None:
    missing = tmp_path / "nothing.json"
    with pytest.raises(UsageError, match=f"there is no file {missing}") as caught:
        review(store_in(tmp_path), missing, "cursor")
    assert caught.value.hint == "mcpctl trust --as cursor FILE"


def test_review_needs_a_file_or_a_client(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        review(store_in(tmp_path), None)
    assert caught.value.message == "which file? give FILE, or --as CLIENT for a client's own"


def test_review_of_a_missing_mcpctl_config_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigNotFoundError):
        review(store_in(tmp_path), tmp_path / "external-mcps.json")


def test_review_shows_each_servers_state_in_a_file_trusted_whole(tmp_path: Path) -> None:
    """MCPCTL_TRUST=1 trusts the file, and mcpctl trust still shows what was approved."""
    client = write(tmp_path / "repo" / ".cursor" / "mcp.json", {"mcpServers": SERVERS})
    config = write(tmp_path / "repo" / "external-mcps.json", {"a": {"command": "run-a"}})
    review(store_in(tmp_path), client)[2]()
    store = store_in(tmp_path, MCPCTL_TRUST="1")
    for file, states in ((client, ["trusted", "trusted"]), (config, ["new"])):
        status, views, _ = review(store, file)
        assert status.reason == "MCPCTL_TRUST=1"
        assert [v.state for v in views] == states
        assert [s.state for s in status.servers.values()] == states


def test_review_of_a_clients_own_file_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    write(tmp_path / "home" / ".cursor" / "mcp.json", {"mcpServers": {"a": {"command": "x"}}})
    status, views, _ = review(store_in(tmp_path), None, "cursor")
    assert status.reason == "own" and [v.name for v in views] == ["a"]


def test_review_of_an_mcpctl_config(tmp_path: Path) -> None:
    config = write(
        tmp_path / "repo" / "external-mcps.json",
        {"a": {"command": "run-a"}, "b": {"command": "run-b", "enabled": False}},
    )
    store = store_in(tmp_path)
    status, views, approve = review(store, config)
    assert status.client is None and status.reason is None
    assert [(v.name, v.state, v.runs) for v in views] == [("a", "new", "run-a"),
                                                          ("b", "new", "run-b")]  # fmt: skip
    assert approve() == ["a", "b"]
    assert [v.state for v in review(store, config)[1]] == ["trusted", "trusted"]


def test_review_of_a_clients_file_that_its_path_does_not_name(tmp_path: Path) -> None:
    file = write(tmp_path / "servers.json", {"mcpServers": SERVERS})
    with pytest.raises(UsageError) as caught:
        review(store_in(tmp_path), file)
    assert str(file) in caught.value.message
    assert caught.value.hint == f"name the client whose file it is: mcpctl trust --as CLIENT {file}"
    assert caught.value.subjects == (str(file),)
