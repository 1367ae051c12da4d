// Calls queued behind a busy server hold bounded memory (issue 36, item 6). A tenant fills its echo
// server's slots with calls that wait, then sends multi-MiB calls that would queue behind them, in
// either era: what waiting calls hold counts against the tenant's budget (AGENTBOX_QUEUED_CALL_BYTES),
// past which a call is refused at once saying so, and the hub's RSS, read from /proc, stays within
// a bound derived from that budget however many calls come; another tenant is answered meanwhile.
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { queueOf, until, untilQueue } from "../../helpers/wait.js";
import { envelope, postModern } from "../modern/modern-client.js";

const MiB = 1024 * 1024;
const BUDGET_MIB = 96;
const CALL_MIB = 6;
/** Enough calls that, held, they would take the hub far past the bound below (150 × 6 MiB). */
const CALLS = 150;
const SLOTS = 4;
const KEYS = { alice: "alice-queued-memory-key", bob: "bob-queued-memory-key" };
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const LONG = { timeout: 600_000 };

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

/** A hub whose echo server takes SLOTS calls at once, for tenants alice and bob, with the budget under test. */
const busyHub = () =>
  startHub({
    extraServers: { echo: { ...fixture("echo-server"), maxConcurrency: SLOTS } },
    config: { tenants: { alice: { apiKey: KEYS.alice }, bob: { apiKey: KEYS.bob } } },
    env: { AGENTBOX_QUEUED_CALL_BYTES: String(BUDGET_MIB * MiB) },
  });

/**
 * Sends CALLS calls of CALL_MIB each, one after another as a flooding client does, each once the
 * one before was refused or queued; `send` returns the refusal's text, or never settles for a call
 * that queued. Returns what happened, with the hub's RSS before the first and at its peak.
 */
async function flood(hub: TestHub, send: (text: string) => Promise<string>, other: () => Promise<void>) {
  const text = "q".repeat(CALL_MIB * MiB);
  const before = rssMiB(hub.pid);
  let peak = before;
  let queuedRss: number | undefined;
  const refusals: string[] = [];
  let answeredMeanwhile: Promise<void> | undefined;
  for (let i = 0; i < CALLS; i++) {
    const queuedBefore = i - refusals.length;
    let refusal: string | undefined;
    void send(text).then(
      (message) => (refusal = message),
      (error: unknown) => (refusal = `the call failed: ${String(error)}`),
    );
    await until(
      `call ${i} to be refused or queued`,
      async () => refusal !== undefined || (await queueOf(hub, "echo", KEYS.alice)).queued > queuedBefore,
      15_000,
      20,
    );
    // what the queued calls alone cost: measured before any call is refused (and leaves its garbage)
    if (refusal === undefined && refusals.length === 0) queuedRss = rssMiB(hub.pid);
    if (refusal !== undefined) refusals.push(refusal);
    peak = Math.max(peak, rssMiB(hub.pid));
    if (i === CALLS / 2) answeredMeanwhile = other();
  }
  await answeredMeanwhile;
  await other();
  const queued = (await queueOf(hub, "echo", KEYS.alice)).queued;
  return { before, peak, queuedRss, refusals, queued };
}

function assertBounded(t: { diagnostic(message: string): void }, hub: TestHub, outcome: Awaited<ReturnType<typeof flood>>) {
  const { before, peak, queuedRss, refusals, queued } = outcome;
  t.diagnostic(`hub RSS ${before.toFixed(0)} MiB, ${queued} calls queued: ${queuedRss?.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB`);
  assert.equal(hub.process.exitCode, null, `the hub died:\n${hub.logs.slice(-5).join("\n")}`);
  // V8 frees a refused call's body, text and arguments once its heap has grown past a multiple of what its last full
  // collection kept (at most four times: its largest growing factor), and what it keeps is the hub as it was plus the
  // queued calls, which the budget bounds: so RSS stays under four times that, however many calls come
  const bound = 4 * (before + BUDGET_MIB);
  assert.ok(peak < bound, `hub RSS peaked at ${peak.toFixed(0)} MiB (from ${before.toFixed(0)}), over the ${bound.toFixed(0)} MiB bound`);
  assert.ok(queued > 0 && queued * CALL_MIB <= BUDGET_MIB, `${queued} calls of ${CALL_MIB} MiB queued within the ${BUDGET_MIB} MiB budget`);
  assert.equal(refusals.length, CALLS - queued, "every other call was refused at once");
  assert.match(refusals[0], /^This call was refused rather than queued: all 4 of the 'echo' server's slots are busy with this tenant's calls/);
  assert.match(refusals[0], /this tenant's calls already waiting for a slot hold \d+\.\d MiB; this one \(6\.0 MiB\)/);
  assert.match(refusals[0], /would pass the 96\.0 MiB that waiting calls may hold \(AGENTBOX_QUEUED_CALL_BYTES\)/);
  // a queued call holds its parsed arguments (about what the budget counts it for), not also the text they were parsed
  // from (the slack: the request each came on, and what the collector has not freed yet)
  const counted = queued * CALL_MIB;
  assert.ok(
    queuedRss! - before < 1.5 * counted + 32,
    `${queued} queued calls of ${CALL_MIB} MiB took the hub from ${before.toFixed(0)} to ${queuedRss!.toFixed(0)} MiB`,
  );
}

describe("queued calls and the tenant's budget: 2025 sessions", () => {
  let hub: TestHub;
  before(async () => {
    hub = await busyHub();
  });
  after(() => hub?.stop());

  test(`${CALLS} calls of ${CALL_MIB} MiB behind a busy server: refused past the budget, the hub's RSS bounded, another tenant answered`, async (t) => {
    // a client that can be asked things takes the SDK's way through the hub, the way the did
    const alice = await hub.connect({ headers: auth(KEYS.alice), capabilities: { elicitation: {} } });
    const holders = Array.from({ length: SLOTS }, () =>
      alice.callTool({ name: "echo_slow", arguments: { steps: 1, delayMs: 600_000 } }, CallToolResultSchema, LONG).catch(() => undefined),
    );
    await untilQueue(hub, "echo", { running: SLOTS }, KEYS.alice);
    const bob: Client = await hub.connect({ headers: auth(KEYS.bob) });
    const outcome = await flood(
      hub,
      async (text) => textOf((await alice.callTool({ name: "echo_echo", arguments: { text } }, CallToolResultSchema, LONG)) as CallToolResult),
      async () => assert.equal(textOf(await call(bob, "echo_echo", { text: "bob is served" })), "bob is served"),
    );
    assertBounded(t, hub, outcome);
    void holders;
  });
});

describe("queued calls and the tenant's budget: 2026-07-28 requests", () => {
  let hub: TestHub;
  before(async () => {
    hub = await busyHub();
  });
  after(() => hub?.stop());

  test(`${CALLS} stateless calls of ${CALL_MIB} MiB behind a busy server: refused past the budget, the hub's RSS bounded, another tenant answered`, async (t) => {
    const request = (key: string, name: string, args: Record<string, unknown>) =>
      postModern(hub, { id: 1, method: "tools/call", params: { name, arguments: args, _meta: envelope() } }, auth(key));
    for (let i = 0; i < SLOTS; i++) void request(KEYS.alice, "echo_slow", { steps: 1, delayMs: 600_000 }).catch(() => undefined);
    await untilQueue(hub, "echo", { running: SLOTS }, KEYS.alice);
    const outcome = await flood(
      hub,
      async (text) => {
        const reply = await request(KEYS.alice, "echo_echo", { text });
        assert.equal(reply.json?.result?.isError, true, reply.text.slice(0, 300));
        return textOf(reply.json.result as CallToolResult);
      },
      async () => {
        const reply = await request(KEYS.bob, "echo_echo", { text: "bob is served" });
        assert.equal(textOf(reply.json?.result as CallToolResult), "bob is served", reply.text);
      },
    );
    assertBounded(t, hub, outcome);
  });
});
