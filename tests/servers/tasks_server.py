"""An MCP server of revision 2026-07-28 that runs tool calls as tasks (the
``io.modelcontextprotocol/tasks`` extension, SEP-2663), in raw JSON-RPC over stdio.

python tasks_server.py

The envelope is that of modern.py: no handshake (``initialize``: -32022), every request
carries ``_meta`` with the protocol version and clientCapabilities, every result has
``resultType`` and the ``serverInfo`` stamp. ``server/discover`` offers tools and the
extension (``capabilities.extensions["io.modelcontextprotocol/tasks"] = {}``).

A ``tools/call`` whose clientCapabilities declare the extension gets a task handle:
``{"resultType": "task", "taskId": "task-N", "status": "working", "statusMessage",
"createdAt", "lastUpdatedAt", "ttlMs": 60000, "pollIntervalMs": 100}``. Then:

* ``tasks/get {"taskId"}``: the task (the same fields); ``completed`` with ``result`` (a
  CallToolResult), ``failed`` with ``error`` ({code, message}), ``input_required`` with
  ``inputRequests``. Unknown task: -32602.
* ``tasks/update {"taskId", "inputResponses"}``: answers an ``input_required`` task, which
  goes back to ``working``; the result is empty.
* ``tasks/cancel {"taskId"}``: the task is ``cancelled`` (a finished one stays as it was);
  the result is the task.
* ``tasks/*`` from a client that did not declare the extension: -32602. ``tasks/list`` and
  ``tasks/result`` (gone in this revision), ``ping`` and the rest: -32601.

Tools:

* ``slow_job`` {seconds?: number, polls?: integer (default 2)}: ``working`` ("step K of N")
  until ``seconds`` have passed since it started, or else until it has been polled ``polls``
  times; then ``completed`` with the text ``done after N polls``. Called without the
  extension declared it runs inline: it sleeps ``seconds`` (if given) and answers ``done``.
* ``failing_job``: the task is ``failed`` at the first poll, with error -32603 and a message of
  two lines with an escape character: ``the job broke: disk full`` / ``ESC[31mretry later``.
* ``asking_job``: the task is ``input_required`` at the first poll: one form elicitation under
  the key ``"env"`` ("Deploy to which environment?": environment staging/production,
  required). After ``tasks/update`` with it accepted the task completes at the next poll with
  ``deployed to <environment>``; declined or cancelled, with an error result.

With ``TASKS_SERVER_LOG`` set, every method received is appended to that file (one a line);
with ``TASKS_SERVER_PID`` set, the server writes its pid to that file when it starts; with
``TASKS_SERVER_SUFFIX`` set, that text ends slow_job's status messages.
"""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import UTC, datetime
from typing import Any

VERSION = "2026-07-28"
EXTENSION = "io.modelcontextprotocol/tasks"
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SERVER_INFO = {"name": "tasks-test-server", "version": "1.0.0"}
CACHE = {"ttlMs": 0, "cacheScope": "private"}
POLL_MS = 100

UNSUPPORTED_VERSION = -32022
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603

TOOLS = [
    {
        "name": "slow_job",
        "description": "A job that takes a while (a task when the client can poll).",
        "inputSchema": {
            "type": "object",
            "properties": {"seconds": {"type": "number"}, "polls": {"type": "integer"}},
        },
    },
    {
        "name": "failing_job",
        "description": "A job that fails.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "asking_job",
        "description": "A job that asks where to deploy, half-way.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]
ASK_ENV = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Deploy to which environment?",
        "requestedSchema": {
            "type": "object",
            "properties": {"environment": {"type": "string", "enum": ["staging", "production"]}},
            "required": ["environment"],
        },
    },
}
FAILURE = "the job broke: disk full\n\x1b[31mretry later"


class Failure(Exception):
    """A JSON-RPC error to answer with."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def text(value: str, *, error: bool = False) -> dict[str, Any]:
    return {"resultType": "complete", "content": [{"type": "text", "text": value}],
            "isError": error}  # fmt: skip


def now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


# TASKS_SERVER_SUFFIX: text that ends every status message of slow_job (hostile text, in the
# adversarial suite).
SUFFIX = os.environ.get("TASKS_SERVER_SUFFIX", "")


class Task:
    def __init__(self, task_id: str, tool: str, args: dict[str, Any]) -> None:
        self.id, self.tool, self.args = task_id, tool, args
        self.status = "working"
        self.message: str | None = "started"
        self.created = self.updated = now()
        self.started = time.monotonic()
        self.polls = 0
        self.answer: dict[str, Any] | None = None
        self.extra: dict[str, Any] = {}

    def set(self, status: str, message: str | None = None, **extra: Any) -> None:
        self.status, self.message, self.extra = status, message, extra
        self.updated = now()

    def advance(self) -> None:
        """What one more poll finds (a finished task stays as it is)."""
        if self.status in ("completed", "failed", "cancelled"):
            return
        self.polls += 1
        if self.tool == "failing_job":
            self.set("failed", error={"code": INTERNAL_ERROR, "message": FAILURE})
        elif self.tool == "asking_job":
            if self.answer is None:
                self.set("input_required", "waiting for an answer", inputRequests={"env": ASK_ENV})
            elif self.answer.get("action") != "accept":
                self.set("completed", result=text(f"the user chose {self.answer.get('action')}",
                                                  error=True))  # fmt: skip
            else:
                env = (self.answer.get("content") or {}).get("environment")
                self.set("completed", result=text(f"deployed to {env}"))
        else:
            seconds = self.args.get("seconds")
            polls = self.args.get("polls", 2)
            if isinstance(seconds, int | float):
                done = time.monotonic() - self.started >= seconds
            else:
                done = self.polls >= polls
            if done:
                self.set("completed", result=text(f"done after {self.polls} polls"))
            else:
                total = polls if not isinstance(seconds, int | float) else "?"
                self.set("working", f"step {self.polls} of {total}" + SUFFIX)

    def wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"taskId": self.id, "status": self.status,
                                "createdAt": self.created, "lastUpdatedAt": self.updated,
                                "ttlMs": 60000, "pollIntervalMs": POLL_MS}  # fmt: skip
        if self.message is not None:
            data["statusMessage"] = self.message
        return {**data, **self.extra}


class TasksServer:
    def __init__(self) -> None:
        self.tasks: dict[str, Task] = {}

    def send(self, message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()

    def serve(self) -> None:
        for line in sys.stdin:
            if not line.strip():
                continue
            message = json.loads(line)
            method = message.get("method")
            if isinstance(method, str):
                _log(method)
            if method is None or "id" not in message:
                continue  # a response or a notification: nothing to answer
            try:
                result = self.answer(method, message.get("params") or {})
            except Failure as e:
                error: dict[str, Any] = {"code": e.code, "message": e.message}
                if e.data is not None:
                    error["data"] = e.data
                self.send({"id": message["id"], "error": error})
                continue
            result.setdefault("resultType", "complete")
            result.setdefault("_meta", {})[SERVER_INFO_KEY] = SERVER_INFO
            self.send({"id": message["id"], "result": result})

    def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            raise Failure(UNSUPPORTED_VERSION, "Unsupported protocol version",
                          {"supported": [VERSION]})  # fmt: skip
        meta = params.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        if meta.get(PROTOCOL_VERSION_KEY) != VERSION:
            raise Failure(UNSUPPORTED_VERSION, "Unsupported protocol version",
                          {"supported": [VERSION]})  # fmt: skip
        capabilities = meta.get(CLIENT_CAPABILITIES_KEY)
        if not isinstance(capabilities, dict):
            raise Failure(INVALID_PARAMS, f"params._meta is missing {CLIENT_CAPABILITIES_KEY}")
        declared = EXTENSION in (capabilities.get("extensions") or {})
        if method == "server/discover":
            return {
                "supportedVersions": [VERSION],
                "capabilities": {"tools": {}, "extensions": {EXTENSION: {}}},
                **CACHE,
            }
        if method == "tools/list":
            return {"tools": TOOLS, **CACHE}
        if method == "tools/call":
            return self.call(params, declared)
        if method in ("tasks/get", "tasks/update", "tasks/cancel"):
            if not declared:
                raise Failure(INVALID_PARAMS, f"{method} needs the {EXTENSION} extension")
            task = self.tasks.get(str(params.get("taskId")))
            if task is None:
                raise Failure(INVALID_PARAMS, "Unknown or expired taskId")
            return self.task_method(method, task, params)
        raise Failure(METHOD_NOT_FOUND, "Method not found", method)

    def call(self, params: dict[str, Any], declared: bool) -> dict[str, Any]:
        name = params.get("name")
        args = params.get("arguments") or {}
        if name not in {tool["name"] for tool in TOOLS}:
            return text(f"no tool {name!r}", error=True)
        if not declared:  # a client that cannot poll: the job runs inline
            if name == "failing_job":
                raise Failure(INTERNAL_ERROR, FAILURE)
            if name == "asking_job":
                return text("asking_job needs the tasks extension", error=True)
            seconds = args.get("seconds")
            if isinstance(seconds, int | float):
                time.sleep(seconds)
            return text("done")
        task = Task(f"task-{len(self.tasks) + 1}", str(name), args)
        self.tasks[task.id] = task
        return {**task.wire(), "resultType": "task"}

    def task_method(self, method: str, task: Task, params: dict[str, Any]) -> dict[str, Any]:
        if method == "tasks/get":
            task.advance()
            return task.wire()
        if method == "tasks/cancel":
            if task.status not in ("completed", "failed", "cancelled"):
                task.set("cancelled", "cancelled by the client")
            return task.wire()
        reply = (params.get("inputResponses") or {}).get("env")
        if task.status != "input_required" or not isinstance(reply, dict):
            raise Failure(INVALID_PARAMS, "this task is not waiting for that answer")
        task.answer = reply
        task.set("working", "resuming")
        return {}


def _log(method: str) -> None:
    path = os.environ.get("TASKS_SERVER_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(method + "\n")


if __name__ == "__main__":
    pid_file = os.environ.get("TASKS_SERVER_PID")
    if pid_file:
        with open(pid_file, "w", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    TasksServer().serve()
