"""What doctor NAME reports: a step's JSON form and its own words, and a diagnosis's verdict,
failed step and next step."""

from __future__ import annotations

from mcpctl.doctor.steps import (
    REMOTE_STEPS,
    STDIO_STEPS,
    DoctorStep,
    ServerDiagnosis,
    StepDone,
    StepFailed,
    stderr_note,
)


def test_the_steps_of_each_kind_of_server_in_order() -> None:
    assert list(STDIO_STEPS) == ["config", "placeholders", "command", "spawn", "protocol",
                                 "lists"]  # fmt: skip
    assert list(REMOTE_STEPS) == ["config", "placeholders", "resolve", "connect", "tls", "http",
                                  "auth", "protocol", "lists"]  # fmt: skip
    for step in ("config", "placeholders", "protocol", "lists"):
        assert REMOTE_STEPS[step] == STDIO_STEPS[step]


def test_a_step_in_json() -> None:
    step = DoctorStep("spawn", "failed", 12.345, "exited; stderr: boom", "run it", ("boom",))
    assert step.to_dict() == {
        "id": "spawn", "status": "failed", "ms": 12.3, "detail": "exited; stderr: boom",
        "fix": "run it", "stderr": ["boom"],
    }  # fmt: skip
    assert DoctorStep("config", "passed", 0.06).to_dict() == {
        "id": "config", "status": "passed", "ms": 0.1, "detail": "", "fix": None,
    }  # fmt: skip
    assert DoctorStep("lists", "skipped").ms == 0.0


def test_how_stderr_is_quoted_and_the_steps_own_words() -> None:
    assert stderr_note(()) == ""
    assert stderr_note(("one",)) == "; stderr: one"
    assert stderr_note(("one", "two")) == "; stderr: one | two"
    step = DoctorStep("spawn", "failed", detail="exited (status 3); stderr: a | b",
                      stderr=("a", "b"))  # fmt: skip
    assert step.own_detail == "exited (status 3)"
    assert DoctorStep("spawn", "failed", detail="exited").own_detail == "exited"
    # Lines that the detail does not end with are not cut from it.
    odd = DoctorStep("spawn", "failed", detail="exited; stderr: a", stderr=("b",))
    assert odd.own_detail == "exited; stderr: a"


def steps(*statuses: str) -> ServerDiagnosis:
    ids = list(STDIO_STEPS)
    return ServerDiagnosis("s", "stdio", [DoctorStep(ids[i], s) for i, s in enumerate(statuses)])  # type: ignore[arg-type]


def test_a_diagnosis_passed() -> None:
    d = steps("passed", "passed", "passed", "passed", "passed", "passed")
    assert d.ok and d.failed is None and d.next is None
    assert d.to_dict() == {
        "name": "s", "transport": "stdio", "ok": True,
        "steps": [s.to_dict() for s in d.steps], "next": None,
    }  # fmt: skip


def test_a_diagnosis_stopped_at_a_step() -> None:
    d = steps("passed", "passed", "failed", "skipped", "skipped", "skipped")
    assert not d.ok
    assert d.failed is d.steps[2]
    assert d.next == "spawn"
    assert d.step("command") is d.steps[2] and d.step("tls") is None
    data = d.to_dict()
    assert (data["ok"], data["next"]) == (False, "spawn")
    last = steps("passed", "passed", "passed", "passed", "passed", "failed")
    assert last.failed is last.steps[5] and last.next is None


def test_a_failed_steps_words() -> None:
    failed = StepFailed("it exited", "run it by hand", 5.0, ("boom",))
    assert (str(failed), failed.detail, failed.fix, failed.ms, failed.stderr) == (
        "it exited", "it exited", "run it by hand", 5.0, ("boom",),
    )  # fmt: skip
    bare = StepFailed("gone")
    assert (bare.fix, bare.ms, bare.stderr) == (None, None, ())
    assert StepDone("ok").ms is None
