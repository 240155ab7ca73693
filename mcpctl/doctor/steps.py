"""What ``mcpctl doctor NAME`` reports: its steps, their results, and the tables of steps.

:class:`DoctorStep` is one layer checked (passed, failed or skipped), :class:`ServerDiagnosis`
every step of one server in order; :data:`STDIO_STEPS` and :data:`REMOTE_STEPS` name the steps
of each kind of server with what each checks. A step's check (the modules
:mod:`~mcpctl.doctor.commonsteps`, :mod:`~mcpctl.doctor.stdiosteps` and
:mod:`~mcpctl.doctor.remotesteps`) returns a :class:`StepDone` or raises :class:`StepFailed`;
:mod:`~mcpctl.doctor.server` runs them in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "REMOTE_STEPS",
    "STDIO_STEPS",
    "DoctorStep",
    "ServerDiagnosis",
    "StepDone",
    "StepFailed",
    "StepStatus",
    "stderr_note",
]

StepStatus = Literal["passed", "failed", "skipped"]

#: The steps of each kind of server, in order, with what each checks.
STDIO_STEPS: dict[str, str] = {
    "config": "the entry exists, validates and is enabled",
    "placeholders": "where each ${VAR} comes from",
    "command": "the command is installed (and its package or image cached)",
    "spawn": "the process starts and stays up",
    "protocol": "it speaks MCP: the protocol era and version",
    "lists": "its tools, prompts and resources can be listed",
}
REMOTE_STEPS: dict[str, str] = {
    "config": STDIO_STEPS["config"],
    "placeholders": STDIO_STEPS["placeholders"],
    "resolve": "the host name resolves",
    "connect": "a TCP connection is accepted",
    "tls": "the certificate is valid, for that host, and not expired",
    "http": "the endpoint answers HTTP, as MCP",
    "auth": "its sign-in: OAuth metadata, and whether mcpctl is signed in",
    "protocol": STDIO_STEPS["protocol"],
    "lists": STDIO_STEPS["lists"],
}


@dataclass(frozen=True)
class DoctorStep:
    """One layer checked: ``status`` passed, failed or skipped (not checked: an earlier step
    failed); ``ms`` the time it took; ``detail`` what was seen; ``fix`` what to do when it
    failed; ``stderr`` the server's own last lines when they tell why (``detail`` ends with
    them: ``; stderr: ...``; :attr:`own_detail` is ``detail`` without them: mcpctl's
    words only)."""

    id: str
    status: StepStatus
    ms: float = 0.0
    detail: str = ""
    fix: str | None = None
    stderr: tuple[str, ...] = ()

    @property
    def own_detail(self) -> str:
        """``detail`` without the server's lines of stderr it quotes."""
        quoted = stderr_note(self.stderr)
        if quoted and self.detail.endswith(quoted):
            return self.detail[: -len(quoted)]
        return self.detail

    def to_dict(self) -> dict[str, Any]:
        """JSON form (an item of ``data.steps``)."""
        data: dict[str, Any] = {
            "id": self.id,
            "status": self.status,
            "ms": round(self.ms, 1),
            "detail": self.detail,
            "fix": self.fix,
        }
        if self.stderr:
            data["stderr"] = list(self.stderr)
        return data


def stderr_note(lines: tuple[str, ...]) -> str:
    """How a step's detail quotes a server's last lines of stderr (``""`` for none)."""
    return "; stderr: " + " | ".join(lines) if lines else ""


@dataclass
class ServerDiagnosis:
    """Every step of one server's diagnosis, in order."""

    name: str
    transport: str
    steps: list[DoctorStep] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every step passed."""
        return all(s.status == "passed" for s in self.steps)

    @property
    def failed(self) -> DoctorStep | None:
        """The step that failed, if one did."""
        return next((s for s in self.steps if s.status == "failed"), None)

    @property
    def next(self) -> str | None:
        """The step it would check next, had the failed one passed."""
        if self.failed is None:
            return None
        return next((s.id for s in self.steps if s.status == "skipped"), None)

    def step(self, step_id: str) -> DoctorStep | None:
        """The step of that id, if this kind of server has it."""
        return next((s for s in self.steps if s.id == step_id), None)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``mcpctl doctor NAME --json`` data)."""
        return {
            "name": self.name,
            "transport": self.transport,
            "ok": self.ok,
            "steps": [s.to_dict() for s in self.steps],
            "next": self.next,
        }


class StepFailed(Exception):
    """What a step saw that does not work, and how to fix it."""

    def __init__(
        self,
        detail: str,
        fix: str | None = None,
        ms: float | None = None,
        stderr: tuple[str, ...] = (),
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.fix = fix
        self.ms = ms
        self.stderr = stderr


@dataclass
class StepDone:
    """A passed step's detail, and its time when it is not the wall time of the step (the
    probe's own measure of the phase)."""

    detail: str
    ms: float | None = None
