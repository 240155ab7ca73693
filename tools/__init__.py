"""Development tools of the mcpctl repository: not part of the package (the wheel does not
ship them). Each runs as a script from the checkout (``.venv/bin/python tools/docgen.py``)
with mcpctl installed; the tests import them as ``tools.*``."""
