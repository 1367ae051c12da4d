"""The hub's tools, callable from code: `from agentbox import tools; tools.file_read(path="a.txt")`.

Each function is generated from the hub's live `tools/list`, with the tool's description as its
docstring and its parameters as keyword arguments. Calls go to the hub as the same client
session that runs this code, so they see the same browser tabs, terminals and files.
A call returns the tool's structured content if it has any, else its text; a tool error raises
ToolCallError, whose `.result` holds the structured content the failed call still carries (a
command's exit code, stdout and stderr), or None:

    try:
        run = tools.terminal_exec(command="grep -q x notes.txt")
    except ToolCallError as failed:
        run = failed.result  # {"exitCode": 1, "stdout": "", "stderr": "", ...}
"""
import inspect
import json
import os
import urllib.error
import urllib.request

__all__ = ["tools", "ToolCallError", "call_tool"]


class ToolCallError(Exception):
    """The tool answered with an error result (isError) or the hub refused the call.

    `result` is the error result's structured content (a dict shaped by the tool's output schema),
    or None when it has none (the hub refused the call, or the tool had no data to give).
    """

    def __init__(self, message, result=None):
        super().__init__(message)
        self.result = result


_request_id = 0


def _rpc(method, params):
    global _request_id
    url = os.environ.get("AGENTBOX_HUB_URL")
    if not url:
        raise ToolCallError("Tools are unavailable: this code session was not started by an agentbox hub (AGENTBOX_HUB_URL is not set).")
    _request_id += 1
    body = json.dumps({"jsonrpc": "2.0", "id": _request_id, "method": method, "params": params}).encode()
    # the header's name comes from the code server (servers/lib/session-events.ts), like the token
    token_header = os.environ.get("AGENTBOX_SESSION_TOKEN_HEADER")
    if not token_header:
        raise ToolCallError("Tools are unavailable: this code session has no session token from the hub.")
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json",
        "Accept": "application/json",
        token_header: os.environ.get("AGENTBOX_SESSION_TOKEN", ""),
    })
    try:
        with urllib.request.urlopen(request, timeout=float(os.environ.get("AGENTBOX_TOOL_TIMEOUT_S", "600"))) as response:
            reply = json.loads(response.read().decode())
    except urllib.error.HTTPError as exc:
        raise ToolCallError("The hub refused %s: HTTP %d %s" % (method, exc.code, exc.read().decode(errors="replace")[:500])) from None
    except urllib.error.URLError as exc:
        raise ToolCallError("Cannot reach the hub at %s: %s" % (url, exc.reason)) from None
    if "error" in reply:
        raise ToolCallError("%s failed: %s" % (method, reply["error"].get("message", reply["error"])))
    return reply.get("result", {})


def _unwrap(name, result):
    text = "\n".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")
    if result.get("isError"):
        raise ToolCallError("%s: %s" % (name, text or "the tool reported an error"), result.get("structuredContent"))
    if result.get("structuredContent") is not None:
        return result["structuredContent"]
    if text or not result.get("content"):
        return text
    return result["content"]  # images and other content without text


def call_tool(name, arguments=None):
    """Call a hub tool by its published name with a dict of arguments."""
    return _unwrap(name, _rpc("tools/call", {"name": name, "arguments": arguments or {}}))


def _docstring(tool):
    lines = [tool.get("description") or tool["name"], ""]
    schema = tool.get("inputSchema") or {}
    required = set(schema.get("required") or [])
    properties = schema.get("properties") or {}
    if properties:
        lines.append("Parameters:")
    for key, prop in properties.items():
        kind = prop.get("type", "any")
        flag = "required" if key in required else "optional"
        description = prop.get("description", "")
        lines.append("  %s (%s, %s): %s" % (key, kind, flag, description))
    return "\n".join(lines)


def _make_function(tool):
    name = tool["name"]
    schema = tool.get("inputSchema") or {}
    required = set(schema.get("required") or [])

    def function(**arguments):
        missing = [key for key in required if key not in arguments]
        if missing:
            raise TypeError("%s() missing required argument(s): %s" % (name, ", ".join(sorted(missing))))
        return call_tool(name, arguments)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = _docstring(tool)
    parameters = [
        inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY,
                          default=inspect.Parameter.empty if key in required else None)
        for key in (schema.get("properties") or {})
        if key.isidentifier()
    ]
    function.__signature__ = inspect.Signature(parameters)
    return function


class _Tools:
    """Every tool of the hub as a function: tools.file_read(path=...). help(tools.NAME) shows its parameters."""

    def __init__(self):
        self._functions = None

    def refresh(self):
        """Read the hub's catalog again (after servers were added or removed)."""
        listed = _rpc("tools/list", {})
        self._functions = {tool["name"]: _make_function(tool) for tool in listed.get("tools", [])}
        return sorted(self._functions)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if self._functions is None or name not in self._functions:
            self.refresh()
        if name not in self._functions:
            raise AttributeError("The hub has no tool %r; available: %s" % (name, ", ".join(sorted(self._functions))))
        return self._functions[name]

    def __dir__(self):
        if self._functions is None:
            self.refresh()
        return sorted(self._functions) + ["refresh"]

    def __repr__(self):
        names = sorted(self._functions) if self._functions is not None else None
        return "<agentbox tools: %s>" % (", ".join(names) if names else "call tools.refresh() or dir(tools) to list them")


tools = _Tools()
