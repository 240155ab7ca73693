"""The steps only a stdio server has in ``mcpctl doctor NAME``: ``command`` (installed, its
package or image cached) and ``spawn`` (the process starts and stays up: the probe runs here,
and the steps after it read its result)."""

from __future__ import annotations

import os
from pathlib import Path

from mcpctl.doctor.commonsteps import CommonSteps
from mcpctl.doctor.steps import StepDone, StepFailed
from mcpctl.text import stderr_cause

__all__ = ["StdioSteps"]


class StdioSteps(CommonSteps):
    """The steps of a stdio server before ``protocol``."""

    async def _command(self) -> StepDone:
        from mcpctl.config.runtimes import install_hint
        from mcpctl.doctor.packages import cached_package
        from mcpctl.doctor.runtimes import OTHER_HINT
        from mcpctl.probe.childenv import child_env
        from mcpctl.probe.serverenv import find_program

        assert self.resolved is not None
        entry = self.resolved.entry
        command = entry.command or ""
        # What the spawn runs: found on the entry's own PATH (resolved) when it sets one.
        own_path = "PATH" in entry.env
        found = find_program(command, child_env(entry), entry.cwd)
        if found is None:
            base = Path(entry.cwd) if entry.cwd else Path.cwd()
            there = base / command
            if os.sep in command and there.is_file():
                # There, but no execute bit: "not found" would send the user the wrong way.
                raise StepFailed(
                    self._safe(f"{command!r} is not executable ({there})"),
                    self._safe(f"chmod +x {there}"),
                )
            where = (
                f"at {there}"
                if os.sep in command
                else ("on the entry's PATH" if own_path else "on PATH")
            )
            raise StepFailed(
                self._safe(f"{command!r} is not found {where}"), install_hint(command, OTHER_HINT)
            )
        detail = f"{command}: {found}" + (" (on the entry's PATH)" if own_path else "")
        package = cached_package(command, entry.args, found)
        if package is not None:
            if package.cached:
                size = f", {_size(package.size)}" if package.size is not None else ""
                version = f" {package.version}" if package.version else ""
                detail += f"; {package.package}{version} is cached{size}"
            elif package.cached is False:
                detail += (
                    f"; {package.package} not cached: the first start downloads it "
                    f"('mcpctl prefetch {self.name}' fetches it ahead)"
                )
            else:
                detail += f"; whether {package.package} is cached is unknown ({package.note})"
        return StepDone(detail)

    async def _spawn(self) -> StepDone:
        from mcpctl.probe.layers import LayerFailed, run_stdio

        assert self.resolved is not None
        try:
            self.run = await run_stdio(
                self.name,
                self.entry,
                self.resolved,
                timeout=self.seconds,
                secrets=self.secrets,
                protocol=self.protocol,
                eras=self.eras,
            )
        except LayerFailed as exc:
            raise StepFailed(exc.message, exc.fix) from None
        result = self.result = self.run.result
        error = result.error
        if error is not None and error.code in (
            "server_exited",
            "spawn_failed",
            "command_not_found",
            "missing_variable",
            "variable_unreachable",
        ):
            diag = self.run.diagnostics
            detail = error.message
            if error.code == "server_exited":
                code = diag.returncode
                how = f"exit status {code}" if code is None or code >= 0 else f"signal {-code}"
                detail = f"the process exited at once ({how}), before answering"
            said = tuple(stderr_cause(diag.tail()))  # the lines health shows too
            detail, fix = self._env_note(detail, error.hint, diag.tail())
            raise StepFailed(detail, fix, result.latency_ms.get("total"), said)
        return StepDone(f"started (pid {self.run.pid}) and stayed up", self.run.spawn_ms)


def _size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"
