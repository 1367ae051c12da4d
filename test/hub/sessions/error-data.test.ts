// A failed call keeps its data: an isError result carries the tool's structuredContent when it
// matches the output schema (a command's exit code, stdout and stderr), through the real hub, on
// both of its paths (direct replies and the SDK server), to the official SDK client, which
// validates structuredContent against the outputSchema on errors too and throws when they
// disagree. Code calling tools back reads the data from the error it catches. Data that does not
// fit the schema (a buggy or hostile server's) is dropped, and the message still arrives.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { fixture, startHub, tempDir, textOf, type TestHub } from "../../helpers/hub.js";

const FAILING_COMMAND = "echo out; echo err >&2; exit 3";

/** A call through the SDK client after tools/list, so the client holds and applies every output schema. */
async function strictCall(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** What a cell printed; the cell itself must have run to its end. */
async function printed(client: Client, language: "python" | "javascript", code: string): Promise<string> {
  const result = await strictCall(client, "code_execute", { language, code });
  assert.equal(result.isError, undefined, textOf(result));
  return (result.structuredContent as { stdout: string }).stdout;
}

describe("failed calls keep their data", () => {
  let hub: TestHub;
  let codeData: string;
  // plain calls go the hub's direct way; a client that takes sampling goes through the SDK server
  const clients: Record<"direct" | "sdk", Client> = {} as never;

  before(async () => {
    codeData = tempDir("agentbox-code-data-");
    hub = await startHub({
      servers: ["terminal", "code"],
      extraServers: { failing: fixture("failure-data-server") },
      env: { AGENTBOX_CODE_DATA_DIR: codeData },
    });
    clients.direct = await hub.connect({ name: "direct" });
    clients.sdk = await hub.connect({ name: "sdk-path", capabilities: { sampling: {} } });
    await Promise.all(Object.values(clients).map((c) => c.listTools()));
  });
  after(async () => {
    await hub?.stop();
    if (codeData) fs.rmSync(codeData, { recursive: true, force: true });
  });

  for (const path of ["direct", "sdk"] as const) {
    test(`terminal_exec of a failing command: isError with exit code, stdout and stderr as data (${path} path)`, async () => {
      const result = await strictCall(clients[path], "terminal_exec", { command: FAILING_COMMAND });
      assert.equal(result.isError, true);
      const data = result.structuredContent as Record<string, unknown>;
      assert.ok(data, `the data came along: ${JSON.stringify(result)}`);
      assert.deepEqual(
        { exitCode: data.exitCode, stdout: data.stdout, stderr: data.stderr, timedOut: data.timedOut, signal: data.signal },
        { exitCode: 3, stdout: "out\n", stderr: "err\n", timedOut: false, signal: null },
      );
      assert.match(textOf(result), /^Exit code 3\./, "the model still reads the outcome in the text");
    });

    test(`data that does not fit the output schema is dropped, the message kept (${path} path)`, async () => {
      const misfit = await strictCall(clients[path], "failing_misfit", {});
      assert.equal(misfit.isError, true);
      assert.equal(misfit.structuredContent, undefined);
      assert.equal(textOf(misfit), "The message the model must still see.");
      const schemaless = await strictCall(clients[path], "failing_schemaless", {});
      assert.deepEqual([schemaless.isError, schemaless.structuredContent, textOf(schemaless)], [true, undefined, "No schema, no data."]);
    });
  }

  test("data that fits is sent as the schema reads it: keys it does not know are left out", async () => {
    const fits = await strictCall(clients.direct, "failing_fits", { extra: true });
    assert.deepEqual([fits.isError, fits.structuredContent], [true, { exitCode: 2, stdout: "partial\n" }]);
    const thrown = await strictCall(clients.direct, "failing_thrown", {});
    assert.deepEqual([thrown.isError, thrown.structuredContent, textOf(thrown)], [true, { exitCode: 5, stdout: "" }, "Thrown with exit code 5."]);
  });

  test("code_execute of code that raises keeps its status, output and exception as data", async () => {
    const result = await strictCall(clients.direct, "code_execute", { language: "python", code: "print('before')\n1 / 0" });
    assert.equal(result.isError, true);
    const data = result.structuredContent as { status: string; stdout: string; error: string };
    assert.equal(data.status, "error");
    assert.equal(data.stdout, "before\n");
    assert.match(data.error, /ZeroDivisionError/);
  });

  test("code_install that pip or npm fails keeps the command, its exit code and output as data", async () => {
    const broken = path.join(hub.workspace, "pkgs", "broken");
    fs.mkdirSync(broken, { recursive: true });
    fs.writeFileSync(path.join(broken, "package.json"), "{ not json");
    hub.handToTenant(broken);
    const result = await strictCall(clients.direct, "code_install", { language: "javascript", packages: ["./pkgs/broken"] });
    assert.equal(result.isError, true, textOf(result));
    const data = result.structuredContent as { language: string; packages: string[]; command: string; exitCode: number | null; output: string };
    assert.ok(data, `the data came along: ${textOf(result)}`);
    assert.deepEqual([data.language, data.packages], ["javascript", ["./pkgs/broken"]]);
    assert.match(data.command, /npm/);
    assert.ok(data.exitCode !== 0 && data.exitCode !== null, `npm's exit code: ${data.exitCode}`);
    assert.match(data.output, /JSON/i);
  });

  test("Python: a failed tool call raises ToolCallError whose .result holds the data", async () => {
    const code = [
      "import json",
      "from agentbox import call_tool, tools, ToolCallError",
      "try:",
      `    tools.terminal_exec(command=${JSON.stringify(FAILING_COMMAND)})`,
      "    print('returned')",
      "except ToolCallError as failed:",
      "    print(json.dumps([failed.result['exitCode'], failed.result['stdout'], failed.result['stderr'], 'Exit code 3.' in str(failed)]))",
      // a success returns the structured content as before
      "print(json.dumps(tools.terminal_exec(command='echo fine')['stdout']))",
      // a refusal by the hub has no data
      "try:",
      "    call_tool('terminal_no_such_tool')",
      "except ToolCallError as refused:",
      "    print(json.dumps(refused.result))",
    ].join("\n");
    assert.equal(await printed(clients.direct, "python", code), '[3, "out\\n", "err\\n", true]\n"fine\\n"\nnull\n');
  });

  test("JavaScript: a failed tool call throws a ToolCallError whose result holds the data", async () => {
    const code = [
      "try {",
      `  await tools.terminal_exec({ command: ${JSON.stringify(FAILING_COMMAND)} });`,
      "  console.log('returned');",
      "} catch (failed) {",
      "  console.log(JSON.stringify([failed.name, failed.result.exitCode, failed.result.stdout, failed.result.stderr, failed.message.includes('Exit code 3.')]));",
      "}",
      "console.log(JSON.stringify((await tools.terminal_exec({ command: 'echo fine' })).stdout));",
    ].join("\n");
    assert.equal(await printed(clients.direct, "javascript", code), '["ToolCallError",3,"out\\n","err\\n",true]\n"fine\\n"\n');
  });
});
