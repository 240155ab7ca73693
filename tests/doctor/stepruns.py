"""One step of doctor's diagnosis run on its own: a run prepared as the steps before it
would leave it, and the step's outcome (done, or failed with its words)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpctl.auth.secrets import SecretStore
from mcpctl.config.model import ServerEntry
from mcpctl.doctor.steps import StepDone, StepFailed


def prepared(
    kind: Callable[..., Any],
    entry: ServerEntry,
    *,
    store: SecretStore | None,
    name: str,
    path: Path,
) -> Any:
    """A run of ``kind`` (doctor's steps of one kind) for ``entry``, as found in ``path``
    with nothing unusable, each step given five seconds."""
    run = kind(name, None, None, store, None, None)
    run.entry = entry
    run.seconds = 5.0
    run.unusable = []
    run.path = path
    return run


def done(step: Callable[[], Awaitable[StepDone]]) -> StepDone:
    return anyio.run(step)


def failed(step: Callable[[], Awaitable[StepDone]]) -> StepFailed:
    with pytest.raises(StepFailed) as caught:
        anyio.run(step)
    return caught.value
