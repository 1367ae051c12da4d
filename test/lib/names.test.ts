// toolName: a server names its sibling tools by the name the hub publishes them under.
import assert from "node:assert/strict";
import { test } from "node:test";
import { configureToolNames, joinToolName, resolveText, toolName, TOOL_PREFIX_ENV } from "../../servers/lib/names.js";

test("without AGENTBOX_TOOL_PREFIX a server's prefix is its own name", () => {
  assert.equal(configureToolNames("file", ["write", "snapshot_restore"], {}), "file");
  assert.equal(toolName("write"), "file_write");
  assert.equal(toolName("snapshot_restore"), "file_snapshot_restore");
});

test("the hub's prefix wins, and an empty prefix publishes bare names", () => {
  configureToolNames("file", ["write"], { [TOOL_PREFIX_ENV]: "fs" });
  assert.equal(toolName("write"), "fs_write");
  configureToolNames("file", ["write"], { [TOOL_PREFIX_ENV]: "" });
  assert.equal(toolName("write"), "write");
  assert.equal(joinToolName("", "read"), "read");
  assert.equal(joinToolName("terminal", "session_kill"), "terminal_session_kill");
});

test("naming a tool the server does not have is refused, so a typo cannot reach a model", () => {
  configureToolNames("terminal", ["exec", "session_create"], {});
  assert.throws(() => toolName("session_crate"), /no tool 'session_crate'.*exec, session_create/);
});

test("a description given as a function is built once the names are known", () => {
  configureToolNames("terminal", ["exec", "session_create"], {});
  assert.equal(
    resolveText(() => `use ${toolName("session_create")}`),
    "use terminal_session_create",
  );
  assert.equal(resolveText("plain"), "plain");
  assert.equal(resolveText(undefined), undefined);
});
