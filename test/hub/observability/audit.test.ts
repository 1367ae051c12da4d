// The audit trail (hub/observability/audit.ts): a line per tool call and session event that names
// the tenant, tool and outcome, and never an API key or (unless the operator asks) an argument value,
// in any log the hub writes; a hostile tool name cannot forge or bloat a line.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { sessionLabel } from "../../../hub/observability/session-label.js";
import { call, fixture, startHub, tempDir, textOf, type TestHub } from "../../helpers/hub.js";
import { startTask } from "../modern/modern-client.js";
import { auditLines, lineWhere, type Line } from "./audit-lines.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const OPERATOR = `operator-${randomBytes(16).toString("hex")}`;
const VALUE = `argument-value-${randomBytes(8).toString("hex")}`;
const SECRET = `secret-value-${randomBytes(8).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

/** Calls echo_slow and cancels it at its first progress. */
async function cancelledCall(client: Client): Promise<void> {
  const abort = new AbortController();
  await assert.rejects(
    client.callTool({ name: "echo_slow", arguments: { steps: 100, delayMs: 50 } }, CallToolResultSchema, {
      signal: abort.signal,
      onprogress: () => abort.abort("enough"),
    }),
  );
}

describe("the audit trail in a file", () => {
  let hub: TestHub;
  let dir: string;
  let file: string;
  let alice: Client;
  const read = () => fs.readFileSync(file, "utf8");

  before(async () => {
    dir = tempDir("agentbox-audit-");
    file = path.join(dir, "audit.log");
    hub = await startHub({
      extraServers: { echo: { ...fixture("echo-server"), taskSupport: { slow: "optional" } } },
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
      env: { AGENTBOX_METRICS_KEY: OPERATOR, AGENTBOX_AUDIT_LOG: file, AGENTBOX_RATE_LIMITS: JSON.stringify({ tools: { echo_stats: "1/min" } }) },
    });
    alice = await hub.connect({ headers: auth(KEY_A), name: "alice-agent" });
    assert.equal(textOf(await call(alice, "echo_echo", { text: VALUE })), VALUE);
    await call(alice, "echo_echo", { text: 42 });
    await call(alice, "echo_stats");
    await call(alice, "echo_stats");
    await cancelledCall(alice);
    const bob = await hub.connect({ headers: auth(KEY_B) });
    await call(bob, "echo_echo", { text: "bob" });
    await call(bob, "hub_end_session");
  });
  after(async () => {
    await hub?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("the file is the hub's alone (0600)", () => {
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  });

  test("a line per call names the tenant, session, client, tool, server, outcome, duration and bytes", async () => {
    const ok = await lineWhere(read, (l) => l.tool === "echo_echo" && l.tenant === "alice" && l.outcome === "ok");
    assert.equal(ok.server, "echo");
    assert.match(ok.session ?? "", /^[0-9a-f]{8}$/);
    assert.match(ok.client ?? "", /^alice-agent /);
    assert.equal(ok.era, "legacy");
    assert.ok(typeof ok.durationMs === "number" && ok.durationMs >= 0, JSON.stringify(ok));
    assert.ok(ok.bytesIn! > VALUE.length && ok.bytesOut! > VALUE.length, JSON.stringify(ok));
    // the request as sent to the server, counted where the hub serialized it anyway: more than the arguments alone
    assert.ok(ok.bytesIn! > Buffer.byteLength(JSON.stringify({ text: VALUE })), JSON.stringify(ok));
    const toolError = await lineWhere(read, (l) => l.tool === "echo_echo" && l.tenant === "alice" && l.outcome === "error");
    assert.equal(toolError.errorType, "tool_error");
    const refused = await lineWhere(read, (l) => l.tool === "echo_stats" && l.outcome === "refused");
    assert.equal(refused.errorType, "rate_limited");
    await lineWhere(read, (l) => l.tool === "echo_stats" && l.outcome === "ok");
    await lineWhere(read, (l) => l.tool === "echo_slow" && l.outcome === "cancelled" && l.tenant === "alice");
    await lineWhere(read, (l) => l.tool === "echo_echo" && l.tenant === "bob" && l.outcome === "ok");
    await lineWhere(read, (l) => l.tool === "hub_end_session" && l.server === "hub" && l.outcome === "ok");
  });

  test("a 2026 call run as a task names its task and its era", async () => {
    const taskId = await startTask(hub, auth(KEY_A), "echo_slow", { steps: 1, delayMs: 10 });
    const line = await lineWhere(read, (l) => l.taskId === taskId);
    assert.equal(line.outcome, "ok");
    assert.equal(line.tenant, "alice");
    assert.equal(line.era, "modern");
    assert.equal(line.tool, "echo_slow");
  });

  test("sessions are recorded as they open and close, with the reason", async () => {
    const opened = await lineWhere(read, (l) => l.audit === "session" && l.event === "opened" && l.tenant === "bob");
    const closed = await lineWhere(read, (l) => l.audit === "session" && l.event === "closed" && l.session === opened.session);
    assert.equal(closed.reason, "ended");
    const gone = await hub.connect({ headers: auth(KEY_A) });
    await call(gone, "echo_echo", { text: "bye" });
    const label = sessionLabel((gone.transport as StreamableHTTPClientTransport).sessionId!);
    await lineWhere(read, (l) => l.tool === "echo_echo" && l.outcome === "ok" && l.session === label);
    // the client ends its session itself (DELETE)
    await (gone.transport as StreamableHTTPClientTransport).terminateSession();
    assert.equal((await lineWhere(read, (l) => l.event === "closed" && l.session === label)).reason, "client");
  });

  test("no log the hub wrote holds a key or an argument value, and the hub's own log holds no audit line", async () => {
    await lineWhere(read, (l) => l.tool === "echo_slow");
    const logs = hub.logs.join("\n");
    for (const [where, text] of [
      ["audit file", read()],
      ["stdout and stderr", logs],
    ]) {
      for (const secret of [KEY_A, KEY_B, OPERATOR, VALUE]) assert.ok(!text.includes(secret), `${where} holds ${secret.slice(0, 12)}…`);
    }
    assert.equal(auditLines(logs).length, 0, "audit lines go to the file only");
  });

  test("a tool name with newlines and a megabyte cannot forge or bloat a line", async () => {
    const forged = `evil\n{"audit":"call","tenant":"bob","tool":"forged","outcome":"ok"}\n`;
    const name = forged + "x".repeat(1024 * 1024);
    await assert.rejects(alice.callTool({ name, arguments: { text: "x".repeat(100_000) } }), /Unknown tool/);
    const refused = await lineWhere(read, (l) => l.errorType === "unknown_tool");
    assert.equal(refused.tenant, "alice");
    assert.equal(refused.outcome, "refused");
    assert.ok(refused.tool!.startsWith("evil\n"), "the name is kept, escaped");
    for (const line of read().split("\n").filter(Boolean)) {
      assert.ok(line.length < 4096, `a line of ${line.length} characters`);
      assert.notEqual((JSON.parse(line) as Line).tool, "forged");
    }
  });

  test("/metrics counts calls per tenant for the operator", async () => {
    const text = await (await fetch(`${hub.origin}/metrics`, { headers: auth(OPERATOR) })).text();
    assert.match(text, /agentbox_tenant_tool_calls_total\{tenant="alice",outcome="ok"\} \d+/);
    assert.match(text, /agentbox_tenant_tool_calls_total\{tenant="bob",outcome="ok"\} 1/);
    assert.match(text, /agentbox_tenant_sessions\{tenant="alice"\} \d+/);
  });
});

describe("the audit trail on stdout, with arguments", () => {
  let hub: TestHub;
  const read = () => hub.logs.join("\n");

  before(async () => {
    hub = await startHub({
      // a second echo server whose calls time out after half a second without progress
      extraServers: { echo: fixture("echo-server"), quick: { ...fixture("echo-server"), timeoutMs: 500 } },
      config: { tenants: { alice: { apiKey: KEY_A } } },
      env: { AGENTBOX_AUDIT_ARGUMENTS: "1", AGENTBOX_SESSION_IDLE_MS: "1500" },
    });
  });
  after(() => hub?.stop());

  test("a call past its timeout is recorded as timeout, and an idle session as closed for idling", async () => {
    const client = await hub.connect({ headers: auth(KEY_A) });
    await call(client, "quick_slow", { steps: 1, delayMs: 2000 });
    const line = await lineWhere(read, (l) => l.tool === "quick_slow");
    assert.deepEqual([line.outcome, line.errorType, line.server], ["timeout", "request_timeout", "quick"]);
    // the session then idles past AGENTBOX_SESSION_IDLE_MS
    assert.equal((await lineWhere(read, (l) => l.event === "closed" && l.session === line.session)).reason, "idle");
  });

  test("arguments are recorded with secret-looking fields redacted, and a huge one cut short", async () => {
    const client = await hub.connect({ headers: auth(KEY_A) });
    const args = { text: VALUE, password: SECRET, nested: { apiKey: SECRET, list: [{ token: SECRET }] }, big: "y".repeat(200_000) };
    await call(client, "echo_echo", args);
    const line = await lineWhere(read, (l) => l.tool === "echo_echo");
    assert.equal(line.arguments?.text, VALUE);
    assert.equal(line.arguments?.password, "[redacted]");
    assert.deepEqual(line.arguments?.nested, { apiKey: "[redacted]", list: [{ token: "[redacted]" }] });
    assert.ok(String(line.arguments?.big).length < 5000, "a huge argument is cut");
    // a hundred thousand empty objects cost their brackets, empty strings their quotes: they cannot pass the bound for free
    await call(client, "echo_echo", { text: "second", empties: Array.from({ length: 100_000 }, () => ({})) });
    await call(client, "echo_echo", { text: "third", blanks: Array(100_000).fill("") });
    for (const text of ["second", "third"]) {
      const line = await lineWhere(read, (l) => l.tool === "echo_echo" && l.arguments?.text === text);
      assert.ok(JSON.stringify(line).length < 12_000, `a line of ${JSON.stringify(line).length} characters`);
    }
    assert.ok(!read().includes(SECRET), "no secret-looking field's value in any log");
    assert.ok(!read().includes(KEY_A), "no key in any log");
  });
});

describe("/metrics names a bounded number of tenants", () => {
  let hub: TestHub;
  const keys = Array.from({ length: 5 }, (_, i) => [`t${i}`, `key-${i}-${randomBytes(12).toString("hex")}`] as const);

  before(async () => {
    hub = await startHub({
      extraServers: { echo: fixture("echo-server") },
      env: {
        AGENTBOX_TENANTS: keys.map(([t, k]) => `${t}:${k}`).join(","),
        AGENTBOX_METRICS_KEY: OPERATOR,
        AGENTBOX_METRICS_TENANTS: "2",
        AGENTBOX_AUDIT_LOG: "off",
      },
    });
  });
  after(() => hub?.stop());

  test("past the cap, tenants are summed as _other", async () => {
    for (const [, key] of keys) await call(await hub.connect({ headers: auth(key) }), "echo_echo", { text: "hi" });
    const text = await (await fetch(`${hub.origin}/metrics`, { headers: auth(OPERATOR) })).text();
    const series = [...text.matchAll(/^agentbox_tenant_tool_calls_total\{tenant="([^"]+)",outcome="ok"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])] as const);
    assert.deepEqual(
      new Map(series),
      new Map([
        ["t0", 1],
        ["t1", 1],
        ["_other", 3],
      ]),
      text,
    );
    const sessions = [...text.matchAll(/^agentbox_tenant_sessions\{tenant="([^"]+)"\}/gm)].map((m) => m[1]);
    assert.ok(sessions.length <= 3 && sessions.includes("_other"), sessions.join(","));
    assert.equal(hub.logs.filter((l) => l.includes('"audit"')).length, 0, "AGENTBOX_AUDIT_LOG=off writes no audit line");
  });
});
