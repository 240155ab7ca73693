"""The config file and everything about it.

* :mod:`~mcpctl.config.model` -- plain typed dataclasses (what the rest of mcpctl uses);
  :mod:`~mcpctl.config.checks` -- the fast checker that builds them from JSON;
* :mod:`~mcpctl.config.schema` -- the pydantic models: the schema of record;
* :mod:`~mcpctl.config.jsontext` -- JSON with positions, and the canonical writer;
* :mod:`~mcpctl.config.loader` -- reading (lenient for daemons, raising for commands);
* :mod:`~mcpctl.config.validate` -- the strict validator;
* :mod:`~mcpctl.config.placeholders` -- ``${VAR}`` placeholders, redaction, secret detection;
* :mod:`~mcpctl.config.store` -- the only writer of user files;
* :mod:`~mcpctl.config.siblings` -- an orchestrator's own (internal) MCP servers.

Nothing is imported here: each command loads only the modules it needs.
"""
