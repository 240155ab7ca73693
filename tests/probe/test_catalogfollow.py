"""``follow_catalog``: one server followed over an open connection, with real servers of
both eras -- listed again when it says a list changed, polled when it cannot say, and given
up when it ends the connection."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.config.model import ProtocolMode, ServerEntry
from mcpctl.probe.catalog import Catalog
from mcpctl.probe.catalogfollow import follow_catalog
from mcpctl.probe.eras import EraMemory
from tests.conftest import SERVERS

PY = sys.executable
DEADLINE = 30  # seconds: generous, the machine may be busy


def changing(era: str, trigger: Path, log: Path) -> ServerEntry:
    """A server that adds the tool ``extra`` and says so once ``trigger`` exists."""
    if era == "modern":
        env = {"MODERN_SERVER_TRIGGER": str(trigger), "MODERN_SERVER_LOG": str(log)}
        return ServerEntry(command=PY, args=(str(SERVERS / "modern.py"), "list-changing"), env=env)
    env = {"LEGACY_SERVER_TRIGGER": str(trigger), "LEGACY_SERVER_LOG": str(log)}
    return ServerEntry(
        command=PY, args=(str(SERVERS / "legacy_modes.py"), "list-changing"), env=env
    )


def tools_of(catalog: Catalog) -> list[str]:
    return sorted(t["name"] for t in catalog.tools)


def first_listings(name: str, entry: ServerEntry, count: int, **options: Any) -> list[list[str]]:
    """The tools of the first ``count`` listings ``follow_catalog`` gives, then it is stopped."""
    seen: list[list[str]] = []

    async def followed() -> None:
        with anyio.fail_after(DEADLINE):
            async with anyio.create_task_group() as tg:

                async def on_catalog(catalog: Catalog) -> None:
                    seen.append(tools_of(catalog))
                    if len(seen) == count:
                        tg.cancel_scope.cancel()

                tg.start_soon(
                    lambda: follow_catalog(name, entry, on_catalog, timeout=30, **options)
                )

    anyio.run(followed)
    return seen


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_server_that_says_its_list_changed_is_listed_again_then_only(
    tmp_path: Path, era: str
) -> None:
    """Listed at once, then again when the server says so -- and not every ``poll``
    seconds meanwhile, however short: a server that can say is never polled."""
    trigger, log = tmp_path / "trigger", tmp_path / "log"
    seen: list[list[str]] = []
    memory = EraMemory()

    async def followed() -> None:
        with anyio.fail_after(DEADLINE):
            async with anyio.create_task_group() as tg:

                async def on_catalog(catalog: Catalog) -> None:
                    assert catalog.ok, catalog.message
                    seen.append(tools_of(catalog))
                    if len(seen) == 1:
                        trigger.touch()  # now the server adds a tool and says so
                    elif "extra" in seen[-1]:
                        tg.cancel_scope.cancel()

                tg.start_soon(
                    lambda: follow_catalog(
                        "s", entry, on_catalog, eras=memory, timeout=30, poll=0.01
                    )
                )

    entry = changing(era, trigger, log)

    anyio.run(followed)
    assert len(seen) == 2, seen
    assert "extra" not in seen[0] and seen[1] == sorted([*seen[0], "extra"])
    remembered = memory.recall(entry)  # the era spoken, remembered in the memory given
    assert remembered is not None and remembered.name == era
    if era == "modern":
        # The listen asked for the tools' changes (the server sends nothing otherwise).
        assert "subscriptions/listen" in log.read_text().split()


def test_a_server_that_cannot_say_is_listed_every_poll(tmp_path: Path) -> None:
    """The modern server's default mode has no ``subscriptions/listen``: it is listed again
    every ``poll`` seconds."""
    entry = ServerEntry(command=PY, args=(str(SERVERS / "modern.py"),))
    seen = first_listings("m", entry, 3, poll=0.05)
    assert len(seen) == 3 and seen[0] == seen[1] == seen[2]


def test_a_legacy_server_without_list_changed_is_polled(tmp_path: Path) -> None:
    """A handshake-era server whose capabilities do not say ``listChanged``."""
    entry = ServerEntry(command=PY, args=(str(SERVERS / "legacy_modes.py"), "elicit"))
    seen = first_listings("l", entry, 3, poll=0.05)
    assert len(seen) == 3 and "ask" in seen[0]


# shifty.py, after writing its PID where the test can read it (to stop it).
WITH_PID = """
import os, sys
pid_file, shifty = sys.argv[1:3]
with open(pid_file, "w") as f:
    f.write(str(os.getpid()))
os.execv(sys.executable, [sys.executable, shifty])
"""


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_following_ends_when_the_server_goes_away(tmp_path: Path, era: ProtocolMode) -> None:
    """Noticed at once, not at a poll an hour away: ``follow_catalog`` returns."""
    pid_file = tmp_path / "pid"
    entry = ServerEntry(
        command=PY, args=("-c", WITH_PID, str(pid_file), str(SERVERS / "shifty.py"))
    )
    seen: list[list[str]] = []

    async def on_catalog(catalog: Catalog) -> None:
        # The catalog is the server's, by its name, in the era asked for.
        assert catalog.name == "s" and catalog.era is not None and catalog.era.name == era
        seen.append(tools_of(catalog))
        os.kill(int(pid_file.read_text()), signal.SIGTERM)

    async def followed() -> None:
        with anyio.fail_after(DEADLINE):
            await follow_catalog("s", entry, on_catalog, protocol=era, timeout=30, poll=3600)

    anyio.run(followed)
    assert seen == [["add", "lookup"]]


def test_the_entrys_secrets_come_from_the_source_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FOLLOW_SCRIPT", raising=False)
    entry = ServerEntry(command=PY, args=("${FOLLOW_SCRIPT}",))
    script = str(SERVERS / "legacy_modes.py")
    seen = first_listings("f", entry, 1, secrets={"FOLLOW_SCRIPT": script}.get)
    assert seen == [["add", "echo"]]


def test_a_server_that_never_answers_fails_within_the_timeout_given() -> None:
    """Not the entry's (two minutes here): the connection's deadline is ``timeout``."""
    entry = ServerEntry(command=PY, args=("-c", "import time; time.sleep(120)"), timeout=120_000)

    async def on_catalog(catalog: Catalog) -> None:
        raise AssertionError("listed a server that never answered")

    async def followed() -> None:
        with anyio.fail_after(DEADLINE):
            await follow_catalog("n", entry, on_catalog, timeout=0.5)

    started = time.monotonic()
    with pytest.raises(Exception) as caught:
        anyio.run(followed)
    assert not isinstance(caught.value, AssertionError)
    assert time.monotonic() - started < DEADLINE / 2  # not the test's own deadline
