"""``python -m mcpctl``."""

from mcpctl.cli.app import run

run()
