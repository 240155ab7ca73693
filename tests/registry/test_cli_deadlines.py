"""The commands that read registries answer in time: discover, show, registry sync, add
--from-registry, outdated and upgrade with a hanging registry, and their --timeout flags."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpctl.paths import Paths
from mcpctl.registry import DiscoveryCache
from tests.conftest import Cli, Run, write_config
from tests.registry.server import Registry, make_record, running

SLACK = 3.0


@pytest.fixture
def two(cli: Cli) -> Iterator[tuple[Registry, Registry]]:
    """A fast and a slow registry, both configured and synced, the official one removed."""
    fast = Registry([make_record("io.fast/weather", title="Fast weather")])
    slow = Registry([make_record("io.slow/weather", title="Slow weather")])
    with running(fast) as fast_url, running(slow) as slow_url:
        assert cli("registry", "remove", "official").exit_code == 0
        assert cli("registry", "add", "fast", fast_url).exit_code == 0
        assert cli("registry", "add", "slow", slow_url).exit_code == 0
        r = cli("registry", "sync", "fast", "slow")
        assert r.exit_code == 0, r.stderr
        yield fast, slow


def make_stale() -> None:
    """As if every registry was synced long ago (the next command refreshes them)."""
    cache = DiscoveryCache.open(Paths.from_env(None).discovery_cache)
    cache.conn.execute("UPDATE registries SET synced_at = 0")
    cache.close()


def timed(cli: Cli, *args: str) -> tuple[Run, float]:
    began = time.monotonic()
    run = cli(*args)
    return run, time.monotonic() - began


def gave_up_after(text: str) -> float:
    found = re.search(r"gave up after (\d+\.\d) s", text)
    assert found, text
    return float(found.group(1))


@pytest.mark.parametrize("mode", ["hang", "drip"])
def test_discover_answers_from_the_fast_registry_and_the_cache(
    cli: Cli, two: tuple[Registry, Registry], mode: str
) -> None:
    fast, slow = two
    slow.mode = mode
    make_stale()
    r, waited = timed(cli, "discover", "weather", "--timeout", "2s")
    assert r.exit_code == 0, r.stderr
    assert waited < 2 + SLACK
    assert "io.fast/weather" in r.stdout and "io.slow/weather" in r.stdout  # fast + cache
    assert fast.answered == 2
    assert r.stderr.count("'slow'") == 1 and "'fast'" not in r.stderr, r.stderr
    assert "using cached data" in r.stderr and waited - 1 <= gave_up_after(r.stderr) <= waited
    # Right after: the slow registry is not waited for again, and says since when.
    asked = len(slow.requests)
    r, waited = timed(cli, "discover", "weather", "--json")
    assert r.exit_code == 0 and waited < 1.5
    assert len(slow.requests) == asked
    assert {x["name"] for x in r.json["data"]["results"]} == {"io.fast/weather", "io.slow/weather"}
    [warning] = r.json["warnings"]
    assert re.match(r"registry 'slow' was unreachable \d s ago; using cached data", warning)


@pytest.mark.slow
def test_the_refresh_of_every_command_has_a_timeout(
    cli: Cli, config_path: Path, two: tuple[Registry, Registry]
) -> None:
    _, slow = two
    slow.mode = "hang"
    entry = {"command": "npx", "args": ["-y", "@x/weather@1.0.0"],
             "source": {"registry": "slow", "name": "io.slow/weather", "version": "1.0.0"}}  # fmt: skip
    for args in (
        ["discover", "weather"],
        ["show", "io.fast/weather"],
        ["outdated"],
        ["upgrade", "--dry-run"],
    ):
        write_config(config_path, {"weather": entry})
        make_stale()
        cache = DiscoveryCache.open(Paths.from_env(None).discovery_cache)
        cache.conn.execute("DELETE FROM meta WHERE key LIKE 'failed:%'")  # try it again
        cache.close()
        r, waited = timed(cli, *args, "--timeout", "1s", "--json")
        assert waited < 1 + SLACK, args
        assert r.exit_code in (0, 1), (args, r.stdout)
        slow_warnings = [w for w in r.json["warnings"] if "'slow'" in w]
        assert len(slow_warnings) == 1, (args, r.json)
        assert waited - 1 <= gave_up_after(slow_warnings[0]) <= waited, args


def test_registry_sync_timeout_covers_all_registries(
    cli: Cli, two: tuple[Registry, Registry]
) -> None:
    _, slow = two
    slow.mode = "drip"
    r, waited = timed(cli, "registry", "sync", "--timeout", "1.5", "--json")
    assert waited < 1.5 + SLACK
    assert (r.exit_code, r.json["command"]) == (3, "registry sync")
    assert [s["registry"] for s in r.json["data"]["synced"]] == ["builtin", "fast"]
    [error] = r.json["errors"]
    assert error["code"] == "registry_unavailable" and error["message"].startswith("slow: ")
    assert waited - 1 <= gave_up_after(error["message"]) <= waited
    # Remembered: discover does not wait for it a moment later.
    make_stale()
    r, waited = timed(cli, "discover", "weather")
    assert r.exit_code == 0 and waited < 1.5 and "was unreachable" in r.stderr


def test_add_from_registry_with_a_hanging_registry(
    cli: Cli, config_path: Path, two: tuple[Registry, Registry]
) -> None:
    _, slow = two
    slow.mode = "hang"
    make_stale()
    write_config(config_path, {})
    # add's --timeout is the server's; --registry-timeout bounds the refresh.
    r, waited = timed(cli, "add", "--from-registry", "io.fast/weather",
                      "--registry-timeout", "1s", "--json")  # fmt: skip
    assert r.exit_code == 0 and waited < 1 + 2.0, r.stdout
    assert len([w for w in r.json["warnings"] if "'slow'" in w]) == 1
    # The failure is remembered: the next add does not wait for it again.
    r, waited = timed(cli, "add", "--from-registry", "io.fast/weather", "--json")
    assert r.exit_code == 0 and waited < 1.5, r.stdout
    assert (
        cli("add", "--from-registry", "io.fast/weather", "--registry-timeout", "soon").exit_code
        == 2
    )


@pytest.mark.parametrize(("value", "code"), [("0", 2), ("soon", 2), ("-1s", 2)])
def test_bad_timeouts_are_usage_errors(cli: Cli, value: str, code: int) -> None:
    for args in (["discover"], ["show", "x"], ["registry", "sync"], ["outdated"], ["upgrade"]):
        r = cli(*args, "--timeout", value, "--json")  # parsed before anything is read
        assert r.exit_code == code, (args, r.stdout)
        assert r.json["errors"][0]["code"] == "usage_error" and "--timeout" in r.stdout


def test_a_bare_number_of_seconds_that_looks_like_milliseconds_is_warned_about(
    cli: Cli,
) -> None:
    r = cli("discover", "--offline", "--registry", "builtin", "--timeout", "15000", "--json")
    assert r.exit_code == 0
    assert any("15000" in w and "ms" in w for w in r.json["warnings"]), r.json


@pytest.mark.slow
def test_discover_with_the_default_deadline(cli: Cli, two: tuple[Registry, Registry]) -> None:
    # No --timeout: a hanging registry costs its request limit (10 s), within the 15 s.
    _, slow = two
    slow.mode = "hang"
    make_stale()
    r, waited = timed(cli, "discover", "weather", "--json")
    assert r.exit_code == 0 and waited < 15 + SLACK
    [warning] = r.json["warnings"]
    assert warning.startswith("registry 'slow': ") and gave_up_after(warning) <= 15.0
    assert {x["name"] for x in r.json["data"]["results"]} == {"io.fast/weather", "io.slow/weather"}


@pytest.mark.slow
def test_add_from_registry_with_the_default_deadline(
    cli: Cli, config_path: Path, two: tuple[Registry, Registry]
) -> None:
    _, slow = two
    slow.mode = "drip"
    make_stale()
    write_config(config_path, {})
    r, waited = timed(cli, "add", "--from-registry", "io.fast/weather", "--json")
    assert r.exit_code == 0 and waited < 15 + SLACK, r.stdout
    assert len([w for w in r.json["warnings"] if "'slow'" in w]) == 1
