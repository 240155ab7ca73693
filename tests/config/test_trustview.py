"""A config file's trust as commands show it: which servers wait, the refusal of a command
that would start them, the warning of one that only reads, and the command to approve."""

from __future__ import annotations

from pathlib import Path

from mcpctl.config.trustview import FileTrust, ServerTrust, trust_command

PATH = Path("/work/my project/external-mcps.json")
QUOTED = "'/work/my project/external-mcps.json'"


def file_trust(states: dict[str, str], client: str | None = None) -> FileTrust:
    servers = {n: ServerTrust(n, s, f"sha256:{n}") for n, s in states.items()}  # type: ignore[arg-type]
    return FileTrust(PATH, str(PATH), None, servers, client)


def test_one_server_waiting_is_refused_in_the_singular() -> None:
    trust = file_trust({"a": "trusted", "b": "new"})
    assert not trust.trusted and trust.waiting() == ["b"]
    refusal = trust.refusal()
    assert refusal is not None
    assert refusal.message == (
        f"{PATH} is not trusted: 1 server waits for approval (b); review it with "
        f"'mcpctl trust {QUOTED}'"
    )
    assert refusal.path == str(PATH) and refusal.names == ("b",)
    assert refusal.subjects == (str(PATH), "b")
    assert trust.notice() == (
        f"{PATH} is not trusted: 1 server waits for approval (b); none of them is started "
        f"until 'mcpctl trust {QUOTED}'"
    )


def test_many_servers_waiting_are_counted_and_the_first_five_named() -> None:
    names = [f"s{i}" for i in range(7)]
    trust = file_trust(dict.fromkeys(names, "changed"))
    refusal = trust.refusal()
    assert refusal is not None
    assert refusal.message == (
        f"{PATH} is not trusted: 7 servers wait for approval (s0, s1, s2, s3, s4 and 2 more); "
        f"review them with 'mcpctl trust {QUOTED}'"
    )
    assert refusal.subjects == (str(PATH), *names)
    six = file_trust(dict.fromkeys(names[:6], "new"))
    assert "(s0, s1, s2, s3, s4 and 1 more);" in str(six.notice())
    five = file_trust(dict.fromkeys(names[:5], "new"))
    assert "5 servers wait for approval (s0, s1, s2, s3, s4); none" in str(five.notice())
    two = file_trust({"a": "new", "b": "changed"})
    assert "2 servers wait for approval (a, b); review them with" in str(two.refusal())


def test_a_refusal_of_some_servers_names_those_and_counts_every_one_waiting() -> None:
    trust = file_trust({"a": "new", "b": "trusted", "c": "changed", "d": "new"})
    assert trust.waiting(["d", "b", "zzz", "a"]) == ["d", "a"]  # in the order asked
    assert trust.refusal(["b", "zzz"]) is None  # those may run
    refusal = trust.refusal(["c"])
    assert refusal is not None and refusal.names == ("c",)
    assert "3 servers wait for approval (a, c, d); review them" in refusal.message
    assert refusal.subjects == (str(PATH), "a", "c", "d")


def test_a_file_trusted_whole_or_fully_approved_refuses_nothing() -> None:
    whole = FileTrust(PATH, str(PATH), "own", {"a": ServerTrust("a", "new", "d")})
    assert whole.trusted and whole.waiting() == [] and whole.waiting(["a"]) == []
    assert whole.refusal() is None and whole.notice() is None and whole.refusals() == {}
    approved = file_trust({"a": "trusted"})
    assert approved.trusted and approved.refusal() is None and approved.notice() is None
    empty = FileTrust(PATH, str(PATH), None)
    assert empty.servers == {} and empty.trusted


def test_the_command_to_approve_names_the_client_and_quotes_the_path() -> None:
    trust = file_trust({"a": "new"}, client="cursor")
    assert trust.command() == f"mcpctl trust --as cursor {QUOTED}"
    assert f"review it with 'mcpctl trust --as cursor {QUOTED}'" in str(trust.refusal())
    assert trust_command("/a/b.json") == "mcpctl trust /a/b.json"
    assert trust_command("/a/b.json", "claude", yes=True) == (
        "mcpctl trust --yes --as claude /a/b.json"
    )
    assert trust_command(Path("x y.json"), yes=True) == "mcpctl trust --yes 'x y.json'"
