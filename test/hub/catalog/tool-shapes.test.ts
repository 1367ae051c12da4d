// "One tool, one shape" as a client meets it: tools/list of a real hub with every built-in server
// and the hub's own tools (hub_find_tools included, from a search-mode session).
// - Every tool states all four annotation hints (readOnly, destructive, idempotent, openWorld; the compiler checks defineTool's
//   callers; this checks what is really sent, so a tool built another way is caught too).
// - One paging vocabulary: a tool that takes `offset` takes `limit` and answers `nextOffset`;
//   nobody says "there is more" another way (hasMore, truncated) or sizes a page another way
//   (maxChars, lines).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { builtinServers } from "../../../hub/config/config.js";
import { startHub, type TestHub } from "../../helpers/hub.js";

const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;

/** What is wrong with one tool's annotations, or nothing. */
function hintProblems(tool: Tool): string[] {
  const annotations = (tool.annotations ?? {}) as Record<string, unknown>;
  const problems = HINTS.filter((hint) => typeof annotations[hint] !== "boolean").map((hint) => `${tool.name}: ${hint} is ${String(annotations[hint])}`);
  if (annotations.title !== undefined) problems.push(`${tool.name}: a title in annotations (it belongs on the tool)`);
  return problems;
}

type Schema = { properties?: Record<string, Schema>; items?: Schema; type?: string | string[]; minimum?: number; anyOf?: Schema[] };

const topLevel = (schema: unknown): Record<string, Schema> => (schema as Schema | undefined)?.properties ?? {};

/** Every property name in a schema, however nested (objects in arrays included), with its path. */
function allProperties(schema: Schema | undefined, at = ""): string[] {
  if (!schema || typeof schema !== "object") return [];
  const own = Object.entries(schema.properties ?? {}).flatMap(([name, sub]) => [`${at}${name}`, ...allProperties(sub, `${at}${name}.`)]);
  return [...own, ...allProperties(schema.items, at), ...(schema.anyOf ?? []).flatMap((s) => allProperties(s, at))];
}

const allowsNull = (s: Schema): boolean => s.type === "null" || (Array.isArray(s.type) && s.type.includes("null")) || (s.anyOf ?? []).some(allowsNull);

test("hintProblems names each missing hint and a title in annotations", () => {
  const tool = { name: "x_y", inputSchema: { type: "object" }, annotations: { title: "Y", readOnlyHint: true, openWorldHint: false } } as Tool;
  assert.deepEqual(hintProblems(tool), [
    "x_y: destructiveHint is undefined",
    "x_y: idempotentHint is undefined",
    "x_y: a title in annotations (it belongs on the tool)",
  ]);
  assert.deepEqual(
    hintProblems({ name: "bare", inputSchema: { type: "object" } } as Tool),
    HINTS.map((h) => `bare: ${h} is undefined`),
  );
});

describe("one shape for every tool in tools/list", () => {
  let hub: TestHub;
  let tools: Tool[];

  before(async () => {
    // the catalog as a client first reads it: every server listed from the build's manifest, none started (as by default)
    hub = await startHub({ env: { AGENTBOX_START: "" } });
    const client = await hub.connect();
    const search = await hub.connect({ path: "/mcp?catalog=search" });
    const found = (await search.listTools()).tools.filter((t) => t.name === "hub_find_tools");
    tools = [...(await client.listTools()).tools, ...found];
    for (const server of Object.keys(builtinServers()))
      assert.ok(
        tools.some((t) => t.name.startsWith(`${server}_`)),
        `no tool of ${server} listed`,
      );
    for (const own of ["hub_status", "hub_metrics", "hub_sessions", "hub_calls", "hub_end_session", "hub_find_tools"])
      assert.ok(
        tools.some((t) => t.name === own),
        `${own} not listed`,
      );
  });
  after(async () => {
    await hub?.stop();
  });

  test("every tool states readOnly, destructive, idempotent and openWorld hints, and none contradicts itself", () => {
    assert.deepEqual(tools.flatMap(hintProblems), []);
    // the spec gives destructiveHint and idempotentHint meaning only for tools that modify
    // something; a read-only tool that claims to destroy contradicts itself
    const contradictions = tools.filter((t) => t.annotations?.readOnlyHint && (t.annotations.destructiveHint || !t.annotations.idempotentHint));
    assert.deepEqual(
      contradictions.map((t) => t.name),
      [],
      "read-only tools say destructiveHint false and idempotentHint true",
    );
  });

  test("the hub's own tools declare what they return", () => {
    const bare = tools.filter((t) => t.name.startsWith("hub_") && !t.outputSchema).map((t) => t.name);
    assert.deepEqual(bare, []);
  });

  test("every tool that takes offset takes limit and answers nextOffset (a number or null)", () => {
    const paging = tools.filter((t) => "offset" in topLevel(t.inputSchema));
    const wrong = paging.flatMap((t) => {
      const input = topLevel(t.inputSchema);
      const next = topLevel(t.outputSchema).nextOffset;
      const problems = [];
      if (!("limit" in input)) problems.push(`${t.name}: offset without limit`);
      if (input.offset.minimum !== 0) problems.push(`${t.name}: offset does not count from 0 (minimum ${input.offset.minimum})`);
      if (!next) problems.push(`${t.name}: no nextOffset in the output schema`);
      else if (!allowsNull(next)) problems.push(`${t.name}: nextOffset cannot be null after the last page`);
      return problems;
    });
    assert.deepEqual(wrong, []);
    // listings and searches page too, not only the character-paged texts
    for (const name of ["file_read", "file_list", "file_tree", "file_find", "file_grep", "browser_links", "arxiv_search", "arxiv_read"]) {
      assert.ok(
        paging.some((t) => t.name === name),
        `${name} takes no offset`,
      );
    }
  });

  test("no page size called maxChars or lines, no hasMore or truncated in any output", () => {
    const inputs = tools.flatMap((t) =>
      Object.keys(topLevel(t.inputSchema))
        .filter((n) => n === "maxChars" || n === "lines")
        .map((n) => `${t.name}.${n}`),
    );
    const outputs = tools.flatMap((t) =>
      allProperties(t.outputSchema as Schema | undefined)
        .filter((p) => /(^|\.)(hasMore|truncated)$/.test(p))
        .map((p) => `${t.name} → ${p}`),
    );
    assert.deepEqual([...inputs, ...outputs], []);
  });

  test("each limit names its unit and has a maximum and a default (in the schema, or said where it depends on another argument)", () => {
    const vague = tools.flatMap((t) => {
      const input = topLevel(t.inputSchema);
      if (!("offset" in input)) return [];
      const limit = input.limit as Schema & { description?: string; maximum?: number; default?: number };
      const text = limit?.description ?? "";
      const unit = /\b(lines|entries|results|matches|links|characters|sessions|recordings)\b/i.test(text);
      const hasDefault = limit?.default !== undefined || /default \d/.test(text);
      return unit && limit.maximum !== undefined && hasDefault ? [] : [`${t.name}: ${JSON.stringify(limit)}`];
    });
    assert.deepEqual(vague, []);
  });
});
