// Tools from code: a session calls the hub's own tools (here the file server's) as the same
// client session, from Python (`from agentbox import tools`) and JavaScript (`tools` global).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { run, openCodeHub, type CodeHub } from "./harness.js";

describe("tools from code", () => {
  let hub: CodeHub;
  let client: Client;

  before(async () => ({ hub, client } = await openCodeHub(["code", "file"])));
  after(() => hub?.stop());

  test("Python writes and reads a file through file_write and file_read", async () => {
    const code = [
      "from agentbox import tools",
      "written = tools.file_write(path='notes/from-py.txt', content='written by python')",
      "read = tools.file_read(path='notes/from-py.txt')",
      "(written['created'], read['text'])",
    ].join("\n");
    const result = await run(client, "python", code);
    assert.equal(result.data.status, "ok", result.text);
    assert.equal(result.text, "(True, 'written by python')");
    assert.equal(fs.readFileSync(path.join(hub.workspace, "notes/from-py.txt"), "utf8"), "written by python");
  });

  test("Python functions are generated from the catalog with docstrings and parameters", async () => {
    const result = await run(
      client,
      "python",
      "import inspect\n(sorted(n for n in dir(tools) if n.startswith('file_w')), 'append to a file' in tools.file_write.__doc__, " +
        "'path' in inspect.signature(tools.file_write).parameters)",
    );
    assert.equal(result.text, "(['file_write'], True, True)");
  });

  test("Python: a tool error raises, naming what was wrong", async () => {
    const result = await run(client, "python", "tools.file_read(path='does/not/exist.txt')");
    assert.equal(result.result.isError, true);
    assert.match(result.data.error!, /ToolCallError: file_read: .*(No such file|not found|does not exist)/i);
    const unknown = await run(client, "python", "tools.no_such_tool()");
    assert.match(unknown.data.error!, /AttributeError: The hub has no tool 'no_such_tool'/);
  });

  test("JavaScript writes and reads a file through tools.file_write and tools.file_read", async () => {
    const code = [
      "const written = await tools.file_write({ path: 'notes/from-js.txt', content: 'written by js' });",
      "const read = await tools.file_read({ path: 'notes/from-js.txt' });",
      "[written.created, read.text, typeof tools.file_read.description]",
    ].join("\n");
    const result = await run(client, "javascript", code);
    assert.equal(result.data.status, "ok", result.text);
    assert.equal(result.text, "[ true, 'written by js', 'string' ]");
    assert.equal(fs.readFileSync(path.join(hub.workspace, "notes/from-js.txt"), "utf8"), "written by js");
    // and Python reads what JavaScript wrote
    assert.equal((await run(client, "python", "tools.file_read(path='notes/from-js.txt')['text']")).text, "'written by js'");
  });

  test("JavaScript: a tool error throws", async () => {
    const result = await run(client, "javascript", "await tools.file_read({ path: 'nope.txt' })");
    assert.equal(result.result.isError, true);
    assert.match(result.data.error!, /^ToolCallError: file_read: /);
  });

  test("calls act as the calling client session", async () => {
    const other = await hub.connect();
    await run(other, "python", "x = 1", { session: "only-other" });
    // the code sees its own client's code sessions (itself busy), never the other client's
    const result = await run(client, "python", "sorted((s['name'], s['busy']) for s in tools.code_sessions()['sessions'] if s['language'] == 'python')");
    assert.equal(result.text, "[('default', True)]");
    // calling back into its own busy session fails at once instead of waiting on itself
    const nested = await run(client, "python", "try:\n    tools.code_execute(language='python', code='1')\nexcept Exception as e:\n    print(e)");
    assert.match(nested.data.stdout, /still running an earlier code_execute/);
    // another session of the same client is fine
    assert.equal((await run(client, "python", "tools.code_execute(language='python', code='6*7', session='side')['result']")).text, "'42'");
  });
});
