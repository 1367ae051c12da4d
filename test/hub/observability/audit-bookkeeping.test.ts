// A client's own bookkeeping (the playground filling its side panels from hub_sessions and hub_calls)
// stays out of the audit trail: a call marked `_meta["agentbox/bookkeeping"]: true` of one of the hub's
// read-only tools that succeeds (or is cancelled) is counted on /metrics instead of written as a line. A hostile client
// cannot use the mark to hide what it did: on any other tool (a server's, or a hub tool that changes
// something), on a call that failed or was refused, or with any value but true, the line is written.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { BOOKKEEPING_META_KEY } from "../../../servers/lib/session-events.js";
import { fixture, startHub, tempDir, type TestHub } from "../../helpers/hub.js";
import { envelope, postModern } from "../modern/modern-client.js";
import { auditLines, lineWhere, type Line } from "./audit-lines.js";

const MARK = { [BOOKKEEPING_META_KEY]: true };
let sentinels = 0;

describe("the audit trail and a client's bookkeeping", () => {
  let hub: TestHub;
  let file: string;
  let client: Client;
  const read = () => fs.readFileSync(file, "utf8");

  const marked = (who: Client, name: string, args: Record<string, unknown> = {}, meta: Record<string, unknown> = MARK) =>
    who.request({ method: "tools/call", params: { name, arguments: args, _meta: meta } }, CallToolResultSchema) as Promise<CallToolResult>;

  /** Calls a tool nobody has, and waits for its line. */
  async function sentinel(): Promise<string> {
    const name = `sentinel_${++sentinels}`;
    await assert.rejects(client.callTool({ name, arguments: {} }), /Unknown tool/);
    await lineWhere(read, (l) => l.tool === name);
    return name;
  }

  /**
   * The call lines the trail got for what `run` did, between two calls of a tool nobody has whose
   * lines are awaited: the trail is written in the order calls end, but a line may reach the file
   * after its call's reply reached the client, so what ran before `run` is fenced off too.
   */
  async function callLinesOf(run: () => Promise<unknown>): Promise<Line[]> {
    const opening = await sentinel();
    await run();
    const closing = await sentinel();
    const lines = auditLines(read());
    return lines
      .slice(
        lines.findIndex((l) => l.tool === opening) + 1,
        lines.findIndex((l) => l.tool === closing),
      )
      .filter((l) => l.audit === "call");
  }

  const summary = (lines: Line[]) => lines.map((l) => `${l.tool} ${l.outcome}${l.errorType ? ` ${l.errorType}` : ""}`);

  before(async () => {
    file = path.join(tempDir("agentbox-audit-"), "audit.log");
    hub = await startHub({ servers: [], extraServers: { echo: fixture("echo-server") }, env: { AGENTBOX_AUDIT_LOG: file } });
    client = await hub.connect({ name: "bookkeeper" });
  });
  after(() => hub?.stop());

  test("marked calls of the hub's read-only tools are not written, and are counted on /metrics", async () => {
    const lines = await callLinesOf(async () => {
      for (const name of ["hub_sessions", "hub_calls", "hub_status", "hub_metrics"]) {
        const result = await marked(client, name, name === "hub_metrics" || name === "hub_status" ? {} : { limit: 5 });
        assert.equal(result.isError, undefined, `${name}: ${JSON.stringify(result.content)}`);
      }
      await marked(client, "hub_sessions");
    });
    assert.deepEqual(summary(lines), []);
    const metrics = await (await fetch(`${hub.origin}/metrics`)).text();
    assert.match(metrics, /agentbox_bookkeeping_calls_total\{tool="hub_sessions"\} 2\b/);
    assert.match(metrics, /agentbox_bookkeeping_calls_total\{tool="hub_calls"\} 1\b/);
    // the session still sees them among its own calls
    const recent = (await client.callTool({ name: "hub_calls", arguments: {} })) as CallToolResult;
    assert.ok(JSON.stringify(recent.structuredContent).includes('"tool":"hub_status"'), JSON.stringify(recent.structuredContent));
  });

  test("the same calls unmarked are written as always", async () => {
    const lines = await callLinesOf(async () => {
      await client.callTool({ name: "hub_sessions", arguments: {} });
      await client.callTool({ name: "hub_status", arguments: {} });
    });
    assert.deepEqual(summary(lines), ["hub_sessions ok", "hub_status ok"]);
  });

  test("the mark hides no call that changes something, fails or is refused", async () => {
    const lines = await callLinesOf(async () => {
      // a server's tool, and a hub tool that opens a context
      await marked(client, "echo_echo", { text: "hidden?" });
      await marked(client, "hub_new_context");
      // a read-only hub tool that failed (a limit out of range)
      const failed = await marked(client, "hub_sessions", { limit: -1 }).catch((err: Error) => err);
      assert.ok(failed instanceof Error || failed.isError, "hub_sessions with limit -1 fails");
      // no such tool
      await assert.rejects(marked(client, "hub_secret_tool"));
      // any value but true
      await marked(client, "hub_sessions", {}, { [BOOKKEEPING_META_KEY]: "true" });
      await marked(client, "hub_sessions", {}, { [BOOKKEEPING_META_KEY]: 1 });
    });
    assert.deepEqual(
      lines.map((l) => l.tool),
      ["echo_echo", "hub_new_context", "hub_sessions", "hub_secret_tool", "hub_sessions", "hub_sessions"],
      summary(lines).join("\n"),
    );
    assert.notEqual(lines[2].outcome, "ok", JSON.stringify(lines[2]));
    assert.equal(lines[3].errorType, "unknown_tool");
  });

  test("a marked read-only tool outside the session's selection is refused, and written", async () => {
    const narrow = await hub.connect({ path: "/mcp?tools=echo_*,!hub_sessions" });
    try {
      const lines = await callLinesOf(() => marked(narrow, "hub_sessions"));
      assert.deepEqual(summary(lines), ["hub_sessions refused not_selected"]);
    } finally {
      await narrow.close();
    }
  });

  test("2026-07-28 requests: the mark beside the envelope works the same", async () => {
    let id = 100;
    const post = (name: string, args: Record<string, unknown> = {}) =>
      postModern(hub, { id: id++, method: "tools/call", params: { name, arguments: args, _meta: { ...envelope(), ...MARK } } });
    const lines = await callLinesOf(async () => {
      assert.ok((await post("hub_sessions")).json?.result, "hub_sessions answered");
      assert.ok((await post("hub_calls")).json?.result, "hub_calls answered");
      assert.ok((await post("echo_echo", { text: "marked" })).json?.result, "echo_echo answered");
    });
    assert.deepEqual(summary(lines), ["echo_echo ok"]);
    assert.equal(lines[0].era, "modern");
  });
});
