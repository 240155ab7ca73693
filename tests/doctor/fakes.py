"""Fake programs on a PATH of their own: real executables that print a version, log how they
were called, and leave a marker file if anything but ``--version`` runs them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class FakeBin:
    """A directory of fake programs (it is the whole PATH while a test uses it)."""

    path: Path
    log: Path
    marker: Path

    def add(self, name: str, version: str = "1.0.0", *, code: int = 0, hang: bool = False) -> Path:
        """A program ``name`` whose ``--version`` prints ``version`` and exits ``code``; with
        ``hang`` it starts a long sleep (a child of the script) instead of answering."""
        answer = "PATH=/usr/bin:/bin sleep 30\n" if hang else f'echo "{version}"\nexit {code}\n'
        script = self.path / name
        name_of_script = "${0##*/}"  # basename, without a program from PATH
        script.write_text(
            "#!/bin/sh\n"
            f'echo "{name_of_script} $*" >> "{self.log}"\n'
            f'if [ "$1" = "--version" ]; then\n{answer}fi\n'
            f'echo "started {name_of_script} $*" >> "{self.marker}"\n'
        )
        script.chmod(0o755)
        return script

    def calls(self) -> list[str]:
        """Every call, ``NAME ARGS`` per line, in order."""
        return self.log.read_text().splitlines() if self.log.exists() else []


def make_fake_bin(root: Path) -> FakeBin:
    """A fresh fake-program directory under ``root`` (PATH is the caller's to set)."""
    path = root / "fake-bin"
    path.mkdir()
    return FakeBin(path, root / "calls.log", root / "STARTED")
