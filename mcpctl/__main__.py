"""``python -m mcpctl``."""

from mcpctl.cli.app import main

raise SystemExit(main())
