"""The config file and everything about it.

* :mod:`~mcpctl.config.model` -- plain typed dataclasses (what the rest of mcpctl uses);
  :mod:`~mcpctl.config.transports` -- the one table of transports it is built on;
  :mod:`~mcpctl.config.checks` -- the fast checker that builds them from JSON;
* :mod:`~mcpctl.config.schema` -- the pydantic models: the schema of record;
* :mod:`~mcpctl.config.jsontext` -- JSON with positions, and the canonical writer;
  :mod:`~mcpctl.config.jsonindex` -- positions worked out only where a problem needs them;
* :mod:`~mcpctl.config.loader` -- reading (lenient for daemons, raising for commands);
* :mod:`~mcpctl.config.validate` -- the strict validator, with
  :mod:`~mcpctl.config.validationreport` (the capped report), :mod:`~mcpctl.config.controlchars`
  and :mod:`~mcpctl.config.entrychecks` (an entry's checks beyond the model);
  ``validate --format sarif`` is written by :mod:`mcpctl.snapshot.sarif`, the one SARIF writer;
* :mod:`~mcpctl.config.runtimes` -- the table of runtimes stdio commands run on (Node.js, uv,
  docker, Python) and how to install each: the validator's hint for a command that is not
  installed; :mod:`mcpctl.doctor.runtimes` checks the same table against this machine
  (installed or not, which versions);
* :mod:`~mcpctl.config.placeholders` -- ``${VAR}`` placeholders and their resolution;
  :mod:`~mcpctl.config.secretvalues` -- the values they resolved to in this process;
* :mod:`~mcpctl.config.redaction` -- what a secret looks like; redaction of all output;
* :mod:`~mcpctl.config.store` -- the only writer of user files, with
  :mod:`~mcpctl.config.backups` and :mod:`~mcpctl.config.edits`;
* :mod:`~mcpctl.config.siblings` -- an orchestrator's own (internal) MCP servers;
* :mod:`~mcpctl.config.cachefiles` -- mcpctl's own small JSON caches (era memory, tool
  listings, token counts, package metadata): size-capped, merged under a bounded lock.

Nothing is imported here: each command loads only the modules it needs.
"""
