// Every tool of every built-in server publishes all four hints DESIGN asks for. The compiler
// checks defineTool's callers; this checks what the servers really send, listed the way the
// manifest build lists them (each server started alone over stdio, tools/list page by page), so a
// tool built some other way, or hints lost on the way out, are caught too.
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { BUILTIN_SERVERS } from "../../servers/builtin.js";
import { TOOL_PREFIX_ENV } from "../../servers/lib/names.js";

const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;
// this file runs as dist/test/lib/tool-hints.test.js; the servers are built beside it
const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

async function listTools(server: string): Promise<Tool[]> {
  const client = new Client({ name: "tool-hints-test", version: "1" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(DIST, "servers", server, "main.js")],
    env: { ...(process.env as Record<string, string>), [TOOL_PREFIX_ENV]: server },
    stderr: "ignore",
  });
  await client.connect(transport);
  try {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools({ cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  } finally {
    await client.close();
  }
}

/** What is wrong with one tool's annotations, or nothing. */
function hintProblems(tool: Tool): string[] {
  const annotations = (tool.annotations ?? {}) as Record<string, unknown>;
  const problems = HINTS.filter((hint) => typeof annotations[hint] !== "boolean").map((hint) => `${tool.name}: ${hint} is ${String(annotations[hint])}`);
  if (annotations.title !== undefined) problems.push(`${tool.name}: a title in annotations (it belongs on the tool)`);
  return problems;
}

test("hintProblems names each missing hint and a title in annotations", () => {
  const tool = { name: "x_y", inputSchema: { type: "object" }, annotations: { title: "Y", readOnlyHint: true, openWorldHint: false } } as Tool;
  assert.deepEqual(hintProblems(tool), [
    "x_y: destructiveHint is undefined",
    "x_y: idempotentHint is undefined",
    "x_y: a title in annotations (it belongs on the tool)",
  ]);
  assert.deepEqual(hintProblems({ name: "bare", inputSchema: { type: "object" } } as Tool), HINTS.map((h) => `bare: ${h} is undefined`));
});

for (const server of BUILTIN_SERVERS) {
  test(`every ${server} tool states readOnly, destructive, idempotent and openWorld hints`, async () => {
    const tools = await listTools(server);
    assert.ok(tools.length > 0, `${server} lists no tools`);
    assert.deepEqual(tools.flatMap(hintProblems), []);
    // the spec gives destructiveHint and idempotentHint meaning only for tools that modify
    // something; a read-only tool that claims to destroy contradicts itself
    const contradictions = tools.filter((t) => t.annotations?.readOnlyHint && (t.annotations.destructiveHint || !t.annotations.idempotentHint));
    assert.deepEqual(contradictions.map((t) => t.name), [], "read-only tools say destructiveHint false and idempotentHint true");
  });
}
