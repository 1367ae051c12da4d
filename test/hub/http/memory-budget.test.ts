// The hub's memory under a client that asks for large results again and again over a resumable
// (Streamable HTTP) session: the events kept for resuming are bounded in bytes per session and in
// all (hub/http/event-store.ts), so the hub stays within its heap and keeps serving every tenant.
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, describe, test } from "node:test";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { both, initialize, readEvents } from "../../helpers/raw-http.js";

const HEAP_MIB = 192;
const RESULT_CHARS = 2 * 1024 * 1024;
const CALLS = 120;

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

describe("memory budget: large results over resumable streams", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({
      extraServers: { echo: fixture("echo-server") },
      env: {
        NODE_OPTIONS: `--max-old-space-size=${HEAP_MIB}`,
        AGENTBOX_EVENT_STORE_BYTES: String(4 * 1024 * 1024),
        AGENTBOX_EVENT_STORE_TOTAL_BYTES: String(16 * 1024 * 1024),
      },
    });
  });
  after(() => hub.stop());

  test(`${CALLS} results of ${RESULT_CHARS / 1024 / 1024} MB with a progress token leave the hub alive, serving, and within its budget`, async (t) => {
    assert.match(
      fs.readFileSync(`/proc/${hub.pid}/environ`, "latin1"),
      new RegExp(`NODE_OPTIONS=--max-old-space-size=${HEAP_MIB}\0`),
      "the heap cap reaches the hub",
    );
    const before = rssMiB(hub.pid);
    const text = "m".repeat(RESULT_CHARS);
    // three sessions, so the hub-wide total is what binds, not only each session's share
    const clients = await Promise.all([0, 1, 2].map(() => hub.connect()));
    let peak = before;
    for (let i = 0; i < CALLS; i++) {
      const client = clients[i % clients.length];
      // a progress token takes the call through the SDK's transport, whose events are kept for resuming
      const result = await client.callTool({ name: "echo_echo", arguments: { text } }, undefined, { onprogress: () => undefined });
      assert.equal((result.content as Array<{ text: string }>)[0].text.length, RESULT_CHARS, `call ${i}`);
      if (i % 10 === 9) peak = Math.max(peak, rssMiB(hub.pid));
    }
    assert.equal(hub.process.exitCode, null, `the hub died:\n${hub.logs.slice(-5).join("\n")}`);
    // another client is still served
    const other = await hub.connect();
    assert.equal(textOf(await call(other, "echo_echo", { text: "still here" })), "still here");
    peak = Math.max(peak, rssMiB(hub.pid));
    // the heap cap plus the V8/Node baseline: without the bound the kept results alone (240 MB) exceed it
    const budget = HEAP_MIB + 64;
    t.diagnostic(`hub RSS ${before.toFixed(0)} -> peak ${peak.toFixed(0)} MiB`);
    assert.ok(peak < budget, `hub RSS peaked at ${peak.toFixed(0)} MiB (from ${before.toFixed(0)}), over the ${budget} MiB budget`);
  });
});

describe("resuming a stream whose events were dropped", () => {
  let hub: TestHub;
  let sessionId: string;
  const headers = () => ({ ...both, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" });
  before(async () => {
    hub = await startHub({ extraServers: { echo: fixture("echo-server") }, env: { AGENTBOX_EVENT_STORE_BYTES: "16384" } });
    sessionId = await initialize(hub);
  });
  after(() => hub.stop());

  /** Make a call over SSE and read its whole stream; then resume it from its first (priming) event. */
  async function callThenResume(id: number, name: string, args: Record<string, unknown>) {
    const res = await fetch(hub.url, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args, _meta: { progressToken: `p${id}` } } }),
    });
    const raw = await res.text();
    const primingId = /^id: ?(.+)$/m.exec(raw)?.[1];
    assert.ok(primingId, `the stream is resumable (it has event ids):\n${raw.slice(0, 300)}`);
    const liveEvents = raw.split("\n\n").filter((e) => /^data: ?\S/m.test(e));
    const live = liveEvents.length;
    const liveAnswer = JSON.parse(liveEvents.at(-1)!.replace(/^[\s\S]*?^data: ?/m, ""));
    const resumed = await fetch(hub.url, { method: "GET", headers: { ...headers(), "last-event-id": primingId } });
    assert.equal(resumed.status, 200);
    const replayed = await readEvents(resumed, (events) => events.some((e) => JSON.parse(e.data).id === id));
    return { live, liveAnswer, replayed: replayed.map((e) => ({ id: e.id, message: JSON.parse(e.data) })) };
  }

  test("a client resuming after its oldest events were evicted is told how many it lost, then gets the rest", async () => {
    const { live, replayed } = await callThenResume(1, "echo_slow", { steps: 600, delayMs: 0 });
    const [notice, ...rest] = replayed;
    assert.equal(
      notice.message.method,
      "notifications/message",
      `the first replayed event is a warning, not a silent gap: ${JSON.stringify(notice).slice(0, 200)}`,
    );
    assert.equal(notice.message.params.level, "warning");
    const lost = Number(/(\d+) event\(s\) of this stream were dropped/.exec(notice.message.params.data)?.[1]);
    assert.equal(lost + rest.length, live, "the count lost plus the events replayed is everything the call sent");
    assert.match(notice.message.params.data, /AGENTBOX_EVENT_STORE_BYTES/);
    assert.equal(rest.at(-1)!.message.result.content[0].text, "done after 600 steps", "the result itself was kept");
  });

  test("a result too large to keep becomes an error on resume instead of a request left waiting", async () => {
    const { replayed, liveAnswer } = await callThenResume(2, "echo_echo", { text: "r".repeat(64 * 1024) });
    assert.equal(liveAnswer.result.content[0].text.length, 64 * 1024, "dropping it from the store did not touch the live stream");
    assert.equal(replayed[0].message.method, "notifications/message");
    const answer = replayed.find((e) => e.message.id === 2)!;
    assert.equal(answer.message.result, undefined);
    assert.match(answer.message.error.message, /result of this request was dropped.*call it again/);
  });
});
