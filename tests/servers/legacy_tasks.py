"""A handshake-era MCP server (2025-11-25) that runs tool calls as tasks, in raw JSON-RPC over
stdio: the tasks of that revision (``capabilities.tasks``, ``execution.taskSupport`` on tools,
the ``task`` param of ``tools/call``, ``tasks/get``, ``tasks/result``, ``tasks/cancel``).

python legacy_tasks.py [--no-capability]

``initialize`` is answered with protocolVersion 2025-11-25 and capabilities ``tools`` and
``tasks: {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}`` (with
``--no-capability``, no ``tasks`` at all: its tools still say ``required``, which a client must
not act on). ``server/discover`` gets -32601, as from any handshake-only server.

Tools (``execution.taskSupport``):

* ``build_report`` (required) {polls?: integer, default 2}: a task ``working`` ("step K of N")
  for ``polls`` polls of ``tasks/get``, then ``completed``; ``tasks/result`` answers the
  CallToolResult ``report ready after N polls``. Called without ``task``: -32601, as the
  revision says.
* ``slow_report`` (required) {}: ``working`` for ever (until cancelled).
* ``failing_report`` (required): ``failed`` at the first poll (statusMessage ``disk full``);
  ``tasks/result`` answers the JSON-RPC error -32603 ``the report broke: disk full``.
* ``asking_report`` (required): ``input_required`` at the first poll. ``tasks/result`` then
  sends the client ``elicitation/create`` (form "Which format?": format pdf/html, required; its
  ``_meta`` names the task), completes with ``report as <format>`` on accept (an error result
  naming the action otherwise) and answers with that.
* ``maybe_report`` (optional): answered at once without ``task`` (``quick report``), as a task
  with it.
* ``echo`` (no ``execution``: forbidden) {text}: the text. With ``task``: -32601.

``tasks/get`` of an unknown task: -32602. ``tasks/cancel``: the task is ``cancelled`` (a
finished one: -32602, as the revision says). ``tasks/result`` of a task still ``working``
completes it first (a blocking call, as the revision allows). With ``LEGACY_TASKS_LOG`` set,
every method received is appended to that file (one a line); ``LEGACY_TASKS_TOOL`` names one
more tool (no parameters, no ``execution``) to list.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from typing import Any

VERSION = "2025-11-25"
SERVER_INFO = {"name": "legacy-tasks-server", "version": "1.0.0"}
RELATED = "io.modelcontextprotocol/related-task"
POLL_MS = 100

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


def _tool(name: str, description: str, support: str | None, **props: Any) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": props},
    }
    if support is not None:
        tool["execution"] = {"taskSupport": support}
    return tool


TOOLS = [
    _tool("build_report", "Build a report (a task).", "required", polls={"type": "integer"}),
    _tool("slow_report", "A report that never ends (a task).", "required"),
    _tool("failing_report", "A report that fails (a task).", "required"),
    _tool("asking_report", "A report that asks for its format (a task).", "required"),
    _tool("maybe_report", "A report, as a task or not.", "optional"),
    _tool("echo", "Return the text unchanged.", None, text={"type": "string"}),
]
EXTRA = os.environ.get("LEGACY_TASKS_TOOL")
if EXTRA:
    TOOLS.append(_tool(EXTRA, "One more tool.", None))
SUPPORT = {t["name"]: (t.get("execution") or {}).get("taskSupport", "forbidden") for t in TOOLS}
ASK_FORMAT = {
    "mode": "form",
    "message": "Which format?",
    "requestedSchema": {
        "type": "object",
        "properties": {"format": {"type": "string", "enum": ["pdf", "html"]}},
        "required": ["format"],
    },
}


class Failure(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def text(value: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": error}


class Task:
    def __init__(self, task_id: str, tool: str, args: dict[str, Any]) -> None:
        self.id, self.tool, self.args = task_id, tool, args
        self.status, self.message = "working", "started"
        self.created = self.updated = now()
        self.polls = 0
        self.result: dict[str, Any] | None = None
        self.error: Failure | None = None

    def set(self, status: str, message: str | None) -> None:
        self.status, self.message, self.updated = status, message, now()

    def finished(self) -> bool:
        return self.status in ("completed", "failed", "cancelled")

    def advance(self) -> None:
        """What one more poll finds."""
        if self.finished() or self.status == "input_required":
            return
        self.polls += 1
        if self.tool == "failing_report":
            self.error = Failure(INTERNAL_ERROR, "the report broke: disk full")
            self.set("failed", "disk full")
        elif self.tool == "asking_report":
            self.set("input_required", "waiting for the format")
        elif self.tool == "slow_report":
            self.set("working", f"step {self.polls}")
        elif self.tool == "maybe_report":
            self.complete(text("quick report"))
        else:
            polls = self.args.get("polls", 2)
            if self.polls >= polls:
                self.complete(text(f"report ready after {self.polls} polls"))
            else:
                self.set("working", f"step {self.polls} of {polls}")

    def complete(self, result: dict[str, Any]) -> None:
        self.result = result
        self.set("completed", None)

    def wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"taskId": self.id, "status": self.status,
                                "createdAt": self.created, "lastUpdatedAt": self.updated,
                                "ttl": 60000, "pollInterval": POLL_MS}  # fmt: skip
        if self.message is not None:
            data["statusMessage"] = self.message
        return data


class Server:
    def __init__(self, capability: bool) -> None:
        self.capability = capability
        self.tasks: dict[str, Task] = {}
        self.asked = 0

    def send(self, message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()

    def serve(self) -> None:
        for line in sys.stdin:
            if line.strip():
                self.handle(json.loads(line))

    def handle(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if not isinstance(method, str):
            return  # a response nobody waits for
        _log(method)
        if "id" not in message:
            return  # a notification
        try:
            result = self.answer(method, message.get("params") or {})
        except Failure as e:
            self.send({"id": message["id"], "error": {"code": e.code, "message": e.message}})
            return
        self.send({"id": message["id"], "result": result})

    def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            capabilities: dict[str, Any] = {"tools": {}}
            if self.capability:
                capabilities["tasks"] = {"list": {}, "cancel": {},
                                         "requests": {"tools": {"call": {}}}}  # fmt: skip
            return {"protocolVersion": VERSION, "capabilities": capabilities,
                    "serverInfo": SERVER_INFO}  # fmt: skip
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": TOOLS}
        if method == "tools/call":
            return self.call(params)
        if method in ("tasks/get", "tasks/result", "tasks/cancel") and self.capability:
            task = self.tasks.get(str(params.get("taskId")))
            if task is None:
                raise Failure(INVALID_PARAMS, "Unknown or expired taskId")
            if method == "tasks/get":
                task.advance()
                return task.wire()
            if method == "tasks/cancel":
                if task.finished():
                    raise Failure(INVALID_PARAMS, f"task {task.id} is already {task.status}")
                task.set("cancelled", "cancelled by the client")
                return task.wire()
            return self.result(task)
        raise Failure(METHOD_NOT_FOUND, "Method not found")

    def call(self, params: dict[str, Any]) -> dict[str, Any]:
        name = str(params.get("name"))
        args = params.get("arguments") or {}
        support = SUPPORT.get(name)
        if support is None:
            return text(f"no tool {name!r}", error=True)
        augmented = isinstance(params.get("task"), dict)
        if support == "required" and not augmented:
            raise Failure(METHOD_NOT_FOUND, f"Method not found: {name} must be called as a task")
        if support == "forbidden" and augmented:
            raise Failure(METHOD_NOT_FOUND, f"Method not found: {name} cannot run as a task")
        if not augmented:
            return text("quick report") if name == "maybe_report" else text(str(args.get("text")))
        task = Task(f"task-{len(self.tasks) + 1}", name, args)
        self.tasks[task.id] = task
        return {"task": task.wire()}

    def result(self, task: Task) -> dict[str, Any]:
        """``tasks/result``: blocks until the task ends (asking the client on the way)."""
        while task.status == "working":
            if task.tool == "slow_report":
                raise Failure(INTERNAL_ERROR, "slow_report never ends")
            task.advance()
        if task.status == "input_required":
            task.complete(self.ask(task))
        if task.status == "cancelled":
            raise Failure(INVALID_PARAMS, f"task {task.id} was cancelled")
        if task.error is not None:
            raise task.error
        assert task.result is not None
        return {**task.result, "_meta": {RELATED: {"taskId": task.id}}}

    def ask(self, task: Task) -> dict[str, Any]:
        """Send ``elicitation/create`` for the task and wait for its answer."""
        self.asked += 1
        request_id = f"elicit-{self.asked}"
        params = {**ASK_FORMAT, "_meta": {RELATED: {"taskId": task.id}}}
        self.send({"id": request_id, "method": "elicitation/create", "params": params})
        for line in sys.stdin:
            if not line.strip():
                continue
            message = json.loads(line)
            if message.get("id") != request_id or "method" in message:
                self.handle(message)  # anything else meanwhile (tasks/get, a cancel...)
                if task.status == "cancelled":
                    return text("cancelled", error=True)
                continue
            reply = message.get("result") or {}
            if reply.get("action") != "accept":
                return text(f"the user chose {reply.get('action')}", error=True)
            return text(f"report as {(reply.get('content') or {}).get('format')}")
        return text("the client went away", error=True)


def _log(method: str) -> None:
    path = os.environ.get("LEGACY_TASKS_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(method + "\n")


if __name__ == "__main__":
    Server(capability="--no-capability" not in sys.argv[1:]).serve()
