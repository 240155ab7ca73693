"""``health --as CLIENT``: probe the servers of a client's file as that client starts them,
beside plain ``health`` of mcpctl's servers of the same names, and say why they differ.

The client's entries come from :func:`mcpctl.render.clientfile.read_client`: their placeholders
resolve from the environment only (a client never reads mcpctl's keyring), and the ones the
client passes on as written reach the server as that text. mcpctl's entries resolve as plain
``health`` resolves them (the environment, then the keyring). A server whose two entries
resolve to the same thing and get the same environment is probed once. Each server starts
with the environment its client would give it (:mod:`mcpctl.render.clientenv`: Claude Code
passes its whole environment, Claude Desktop a few variables...), a project server Claude
Code has not approved is not started (:mod:`mcpctl.render.claudeapproval`). Why two verdicts
differ is found without a probe where it can be (:func:`mcpctl.render.clientcheck.check_entry`):
a variable the client cannot resolve, a command it cannot find, a variable it does not pass.

It lives beside :mod:`mcpctl.render.clientfile` (reading clients' files is rendering's half)
and calls :mod:`mcpctl.probe` for the probes: the probe package never imports the render one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from mcpctl.config.placeholders import SecretSource

if TYPE_CHECKING:
    from pathlib import Path

    from mcpctl.config.model import ProtocolMode, ServerEntry
    from mcpctl.probe.eras import EraMemory
    from mcpctl.probe.health import ProbeResult, ServerKind
    from mcpctl.render.base import Places
    from mcpctl.render.claudeapproval import Approval
    from mcpctl.render.clientcheck import ClientProblem
    from mcpctl.render.clientfile import ClientEntry, ClientView

__all__ = ["AsClientHealth", "AsClientRow", "health_as_client", "verdict"]


def verdict(result: ProbeResult) -> str:
    """``healthy``, ``unhealthy`` (it answered, then failed) or ``unavailable``."""
    if result.healthy:
        return "healthy"
    return "unavailable" if not result.available else "unhealthy"


@dataclass
class AsClientRow:
    """One server of the client's file: the client's verdict, plain ``health``'s, and why
    they differ.

    ``verdict`` is the client's: a probe's verdict, ``disabled`` (disabled in the client's
    file), ``pending_approval`` (a project server Claude Code has not been allowed to start)
    or ``rejected`` (one its settings refuse); ``mcpctl`` is plain ``health``'s (``None``:
    not in mcpctl's config, or not probed because the client does not start the server).
    """

    name: str
    verdict: str
    result: ProbeResult | None = None  # the client's probe
    mcpctl: str | None = None
    mcpctl_result: ProbeResult | None = None
    differs: bool = False
    reason: str | None = None
    problems: list[ClientProblem] = field(default_factory=list)
    env_difference: str | None = None  # names the two environments do not share

    def as_dict(self, target: str, file: Path) -> dict[str, Any]:
        """The ``as`` object of the row's JSON."""
        return {
            "target": target, "file": str(file), "verdict": self.verdict,
            "mcpctl": self.mcpctl, "differs": self.differs, "reason": self.reason,
            "problems": [p.to_dict() for p in self.problems],
        }  # fmt: skip


@dataclass
class AsClientHealth:
    """The rows of ``health --as`` (the client's servers, in its file's order), and the names
    found in one file only: ``only_in_mcpctl`` (not probed as the client: it does not have
    them) and ``only_in_client`` (probed, with nothing to compare with)."""

    target: str
    file: Path
    rows: list[AsClientRow]
    warnings: list[str] = field(default_factory=list)
    only_in_mcpctl: list[str] = field(default_factory=list)
    only_in_client: list[str] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        """Whether every server the client starts is healthy, and none waits for approval."""
        probed = [r for r in self.rows if r.result is not None]
        waiting = any(r.verdict == "pending_approval" for r in self.rows)
        return all(r.verdict == "healthy" for r in probed) and not waiting


async def health_as_client(
    view: ClientView,
    ours: Iterable[tuple[str, ServerEntry, ServerKind]],
    *,
    secrets: SecretSource | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    protocol: ProtocolMode | None = None,
    eras: EraMemory | None = None,
    on_result: Callable[[ProbeResult], object] | None = None,
    environ: Mapping[str, str] | None = None,
    places: Places | None = None,
) -> AsClientHealth:
    """Probe ``view``'s servers as the client starts them, and ``ours`` (mcpctl's servers, as
    plain ``health`` picks them) of the same names as plain ``health`` does.

    ``secrets`` (the keyring) resolves mcpctl's entries and tells, in a reason, a variable
    kept there from one set nowhere; the client's never use it. ``concurrency``, ``timeout``,
    ``protocol`` and ``eras`` are plain ``health``'s. ``environ`` is what the reasons are
    found against (default: the process environment, which the probes always use);
    ``places`` where Claude Code's settings are (default: this machine's). Never raises for
    a failing server.
    """
    import os

    import anyio

    from mcpctl.errors import UsageError
    from mcpctl.probe.childenv import started_by
    from mcpctl.probe.health import probe_all
    from mcpctl.render.clientcheck import ClientProblem, check_entry
    from mcpctl.render.clientfile import helper_headers
    from mcpctl.render.clienthealth_env import builder

    env = os.environ if environ is None else environ
    mine = {name: (entry, kind) for name, entry, kind in ours}
    warnings = list(view.warnings)
    approvals = _approvals(view, places, warnings)
    helper_failed: dict[str, str] = {}
    for name, item in list(view.entries.items()):
        if item.headers_helper is not None and item.entry.enabled:
            try:  # what the client does before it connects
                view.entries[name] = await anyio.to_thread.run_sync(
                    helper_headers, item, view.literals
                )
            except UsageError as exc:
                helper_failed[name] = exc.message
    # A client whose headers helper fails does not connect with the headers it was meant to
    # send: its verdict is the helper's failure, not whatever the server says without them.
    started = [
        item
        for item in view.entries.values()
        if item.entry.enabled and _approved(approvals, item.name) and item.name not in helper_failed
    ]
    differences = {
        item.name: _difference(view.target, item, mine[item.name][0], secrets, env)
        for item in started
        if item.name in mine
    }
    twice = [name for name, (same, _) in differences.items() if not same]
    twice += [name for name in helper_failed if name in mine and _approved(approvals, name)]
    client_results = {
        name: _helper_result(view.entries[name], why, mine.get(name, (None, "external"))[1])
        for name, why in helper_failed.items()
    }
    if on_result is not None:
        for result in client_results.values():
            on_result(result)
    our_results: dict[str, ProbeResult] = {}

    async def as_client() -> None:
        with started_by(builder(view.target)):  # the client's environment, not mcpctl's
            results = await probe_all(
                [(i.name, i.probe_entry(), mine.get(i.name, (None, "external"))[1])
                 for i in started],
                concurrency=concurrency, timeout=timeout, secrets=view.source(),
                protocol=protocol, eras=eras, on_result=on_result,
            )  # fmt: skip
        client_results.update((r.name, r) for r in results)

    async def as_mcpctl() -> None:
        results = await probe_all(
            [(n, mine[n][0], mine[n][1]) for n in twice], concurrency=concurrency,
            timeout=timeout, secrets=secrets, protocol=protocol, eras=eras, on_result=on_result,
        )  # fmt: skip
        our_results.update((r.name, r) for r in results)

    async with anyio.create_task_group() as tg:
        if started:
            tg.start_soon(as_client)
        if twice:
            tg.start_soon(as_mcpctl)

    rows: list[AsClientRow] = []
    for name, item in view.entries.items():
        problems = check_entry(item, view.target, environ=env, secrets=secrets)
        if name in helper_failed:
            problems.append(ClientProblem(name, "command", helper_failed[name]))
        row = AsClientRow(name, "disabled", problems=problems)
        held = approvals.get(name)
        if item.entry.enabled and held is not None and held.state != "approved":
            rows.append(_held(row, name, view, held))
            continue
        if name in client_results:
            row.result = client_results[name]
            row.verdict = verdict(row.result)
            _explain_failure(row, view.target)
        if name in mine and item.entry.enabled:
            row.mcpctl_result = our_results.get(name, row.result)
            row.mcpctl = verdict(row.mcpctl_result) if row.mcpctl_result is not None else None
            row.env_difference = differences.get(name, (True, None))[1]
        _compare(row, view.target, name in mine, stale=_stale(view.target, item, mine, name))
        rows.append(row)
    return AsClientHealth(
        view.target, view.file, rows, warnings,
        only_in_mcpctl=[name for name in mine if name not in view.entries],
        only_in_client=[name for name in view.entries if name not in mine],
    )  # fmt: skip


def _approvals(view: ClientView, places: Places | None, warnings: list[str]) -> dict[str, Approval]:
    """Claude Code's approvals of the servers of a project's ``.mcp.json`` (none for any other
    file, or another client)."""
    if view.target != "claude-code":
        return {}
    from mcpctl.render.claudeapproval import claude_approvals
    from mcpctl.render.importing import here

    found = claude_approvals(view.file, view.entries, places or here(), warnings)
    return found or {}


def _approved(approvals: Mapping[str, Approval], name: str) -> bool:
    return name not in approvals or approvals[name].state == "approved"


def _held(row: AsClientRow, name: str, view: ClientView, approval: Approval) -> AsClientRow:
    """A server the client does not start until the user says so: not probed."""
    from mcpctl.render.clienthealth_env import approval_reason

    row.verdict = "pending_approval" if approval.state == "pending" else "rejected"
    row.reason = approval_reason(name, view.file, approval)
    return row


def _helper_result(item: ClientEntry, why: str, kind: ServerKind) -> ProbeResult:
    """The client's verdict on a server whose headers helper failed: unavailable, for that."""
    from mcpctl.probe.childenv import ProbeError
    from mcpctl.probe.health import ProbeResult

    message = why.removeprefix(f"{item.name}: ")
    hint = "run the headers helper by hand to see why; the client connects only once it works"
    return ProbeResult(
        item.name, kind, item.entry.effective_transport,
        error=ProbeError("headers_helper_failed", message, hint),
    )  # fmt: skip


def _difference(
    target: str,
    item: ClientEntry,
    ours: ServerEntry,
    secrets: SecretSource | None,
    env: Mapping[str, str],
) -> tuple[bool, str | None]:
    """Whether the client starts the server exactly as plain ``health`` would (same command,
    arguments and environment: one probe), and what differs between the environments."""
    from mcpctl.config.placeholders import resolve_entry
    from mcpctl.errors import InvalidEntryError, PlaceholderError
    from mcpctl.render.clienthealth_env import difference, environments

    try:
        theirs = resolve_entry(item.name, item.probe_entry(), policy="error", environ=env,
                               secrets=item.source())  # fmt: skip
        mine = resolve_entry(item.name, ours, policy="error", environ=env, secrets=secrets)
    except (PlaceholderError, InvalidEntryError):
        return False, None
    if theirs is None or mine is None:
        return False, None
    their_env, my_env = environments(target, theirs.entry, mine.entry, env)
    why = difference(target, their_env, my_env)
    same_entry = replace(theirs.entry, inherit_env=mine.entry.inherit_env) == mine.entry
    # The environments explain a difference only between two starts of the same command.
    return not item.launcher and same_entry and their_env == my_env, why if same_entry else None


def _stale(target: str, item: ClientEntry, mine: Mapping[str, Any], name: str) -> bool:
    """Whether the client's entry is not what rendering mcpctl's entry gives (launchers aside)."""
    if item.launcher or name not in mine:
        return False
    from mcpctl.render.targets import get_target

    client = get_target(target)
    expressible = getattr(client, "expressible", None)
    if expressible is None:
        return False
    ours = expressible(mine[name][0])
    theirs = expressible(item.entry)
    return bool(ours is not None and theirs is not None and ours != theirs and not item.literals)


def _explain_failure(row: AsClientRow, target: str) -> None:
    """A client's probe that failed on a variable gets the client's reason as its hint."""
    result = row.result
    if result is None or result.error is None or result.error.code != "missing_variable":
        return
    for problem in row.problems:
        if problem.variable is None or problem.kind not in ("keyring", "unset", "input"):
            continue
        what, _, fix = problem.message.partition("; ")
        if problem.kind != "input":
            what = f"variable {problem.variable} is not set in the environment {target} starts from"
        result.error = result.error._replace(message=what, hint=fix or None)
        return


def _compare(row: AsClientRow, target: str, in_ours: bool, *, stale: bool) -> None:
    if not in_ours:
        row.differs = False
        row.reason = "; ".join(p.message for p in row.problems) or None
        return
    if row.verdict == "disabled":
        row.differs = True
        row.reason = f"disabled in {target}'s config"
        return
    row.differs = row.verdict != row.mcpctl
    if not row.differs:
        notes = [p.message for p in row.problems if p.kind == "literal"]
        row.reason = "; ".join(notes) or None
        return
    mine, theirs = _phrase(row.mcpctl or "-"), _phrase(row.verdict)
    if mine == theirs:
        mine, theirs = row.mcpctl or "-", row.verdict
    why = _why(row, target, stale)
    row.reason = f"{mine} for mcpctl, {theirs} for {target}" + (f": {why}" if why else "")


def _phrase(state: str) -> str:
    return "healthy" if state == "healthy" else "fails"


def _why(row: AsClientRow, target: str, stale: bool) -> str | None:
    if row.problems:
        return "; ".join(p.message for p in row.problems)
    if stale:
        return f"{target}'s entry is not mcpctl's; update it with: mcpctl render {target} --install"
    if row.env_difference is not None:
        return row.env_difference
    failed = row.result if row.verdict != "healthy" else row.mcpctl_result
    if failed is not None and failed.error is not None:
        return f"{failed.error.code}: {failed.error.message}"
    return None
