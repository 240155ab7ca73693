"""``python -m mcpctl``, and the ``mcpctl`` program's entry point.

Two command lines are answered here, before the CLI framework is imported, which alone takes
several times the interpreter's start-up:

* a TAB press runs the program again (``mcpctl __complete ...``, from the shell scripts of
  :mod:`mcpctl.completion.scripts`);
* ``mcpctl run NAME`` (with at most a ``--config FILE``), which a client starts for each
  session of a server (:mod:`mcpctl.launch`): the server replaces mcpctl quickly;
* ``mcpctl list`` with its usual options (:mod:`mcpctl.cli.quick`), what scripts and
  orchestrators run to read the servers.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing is not worth its import on the quick paths
if TYPE_CHECKING:
    from typing import NoReturn


def run() -> NoReturn:
    """Answer a completion request, launch a server, or run the CLI (:func:`mcpctl.cli.app.run`)."""
    if sys.stdin is None or sys.stdout is None or sys.stderr is None:
        # Started with a standard descriptor closed: before anything opens a file that would
        # take its number (see the module).
        from mcpctl.stdstreams import reopen_closed

        reopen_closed()
    import gc

    # Start-up only allocates (modules, the command tree) and frees next to nothing, so the
    # collector's passes over it are wasted: it resumes once the command is built.
    gc.disable()
    args = sys.argv[1:]
    if args[:1] == ["__complete"]:
        from mcpctl.completion.protocol import answer

        sys.exit(answer(args[1:]))
    if "run" in args[:3]:
        from mcpctl import launch

        if launch.fast_args(args) is not None:
            sys.exit(launch.main(args))
    if "list" in args:
        from mcpctl.cli import quick

        code = quick.answer(args)
        if code is not None:
            from mcpctl.stdstreams import leave

            leave(code)
    from mcpctl.cli.app import run as run_cli

    run_cli(collector_paused=True)


if __name__ == "__main__":
    run()
