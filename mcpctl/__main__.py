"""``python -m mcpctl``, and the ``mcpctl`` program's entry point.

A TAB press runs the program again (``mcpctl __complete ...``, from the shell scripts of
:mod:`mcpctl.completion.scripts`): it is answered here, before the CLI framework is
imported, which alone takes several times the interpreter's start-up.
"""

import sys
from typing import NoReturn


def run() -> NoReturn:
    """Answer a completion request, or run the CLI (:func:`mcpctl.cli.app.run`)."""
    if sys.argv[1:2] == ["__complete"]:
        from mcpctl.completion.protocol import answer

        sys.exit(answer(sys.argv[2:]))
    from mcpctl.cli.app import run as run_cli

    run_cli()


if __name__ == "__main__":
    run()
