// A client opening sessions without bound (or churning through them) is refused with 429/503 and
// advice, while other tenants and other clients keep opening theirs; at a cap the principal's own
// idle sessions make room, and a session with a call running is never closed for it.
import assert from "node:assert/strict";
import http from "node:http";
import { after, before, describe, test } from "node:test";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { both } from "../../helpers/raw-http.js";
import { until, untilQueue } from "../../helpers/wait.js";

const initBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

interface Opened {
  status: number;
  sessionId?: string;
  retryAfter?: string;
  error?: string;
}

/** POST initialize from a loopback source address of the test's choosing (another "client"). */
function open(hub: TestHub, headers: Record<string, string> = {}, from = "127.0.0.1"): Promise<Opened> {
  const url = new URL(hub.url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, method: "POST", localAddress: from, headers: { ...both, ...headers } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (text += d));
        res.on("end", () => {
          const json = /"error":\{[^}]*"message":"([^"]*)"/.exec(text);
          resolve({
            status: res.statusCode!,
            sessionId: res.headers["mcp-session-id"] as string | undefined,
            retryAfter: res.headers["retry-after"] as string | undefined,
            error: json?.[1],
          });
        });
      },
    );
    req.on("error", reject);
    req.end(initBody);
  });
}

const close = (hub: TestHub, sessionId: string, headers: Record<string, string> = {}) =>
  fetch(hub.url, { method: "DELETE", headers: { "mcp-session-id": sessionId, ...headers } }).then((r) => r.status);

describe("session caps per tenant", () => {
  let hub: TestHub;
  const alice = { Authorization: "Bearer alice-key" };
  const bob = { Authorization: "Bearer bob-key" };
  before(async () => {
    hub = await startHub({
      extraServers: { echo: fixture("echo-server") },
      env: {
        AGENTBOX_TENANTS: "alice:alice-key,bob:bob-key",
        AGENTBOX_MAX_SESSIONS: "4",
        AGENTBOX_SESSION_RATE: "off",
        AGENTBOX_SESSION_RECLAIM_IDLE_MS: "1500",
      },
    });
  });
  after(() => hub.stop());

  test("a full tenant gets 503 with what to do, another tenant still opens sessions, and a closed session makes room", async () => {
    const opened: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await open(hub, alice);
      assert.equal(res.status, 200, `session ${i}`);
      opened.push(res.sessionId!);
    }
    const refused = await open(hub, alice);
    assert.equal(refused.status, 503);
    assert.match(refused.error!, /Too many sessions.*4 open.*AGENTBOX_MAX_SESSIONS.*DELETE/);
    assert.ok(Number(refused.retryAfter) > 0, "Retry-After says when to come back");
    const theirs = await open(hub, bob);
    assert.equal(theirs.status, 200, "another tenant is not locked out");
    assert.equal(await close(hub, opened.pop()!, alice), 200);
    assert.equal((await open(hub, alice)).status, 200, "closing a session with DELETE makes room at once");
  });
});

describe("session caps: idle sessions make room", () => {
  // the floor is a millisecond, so every session not running a call is idle past it: which ones
  // make room is what is checked here; how long they must be idle first is admission.test.ts's, on
  // a mock clock
  let hub: TestHub;
  const carol = { Authorization: "Bearer carol-key" };
  before(async () => {
    hub = await startHub({
      extraServers: { echo: fixture("echo-server") },
      env: { AGENTBOX_TENANTS: "carol:carol-key", AGENTBOX_MAX_SESSIONS: "4", AGENTBOX_SESSION_RATE: "off", AGENTBOX_SESSION_RECLAIM_IDLE_MS: "1" },
    });
  });
  after(() => hub.stop());

  test("at the cap, idle sessions are closed to make room, the longest idle first, never one with a call running", async () => {
    const idle: string[] = [];
    for (let i = 0; i < 3; i++) idle.push((await open(hub, carol)).sessionId!);
    const busy = await hub.connect({ headers: carol });
    const running = call(busy, "echo_slow", { steps: 60, delayMs: 100 });
    await untilQueue(hub, "echo", { running: 1 }, "carol-key");
    // the busy session holds the fourth place; each new one takes an idle one's
    const fresh: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await open(hub, carol);
      assert.equal(res.status, 200, `session ${i} made room for`);
      fresh.push(res.sessionId!);
    }
    const held = async (id: string) => (await close(hub, id, carol)) === 200;
    for (const id of idle) assert.equal(await held(id), false, "the idle sessions were closed first");
    assert.deepEqual(await Promise.all(fresh.slice(0, 3).map(held)), [false, false, false], "then the next longest idle");
    assert.match(textOf(await running), /done after 60 steps/);
    assert.equal(textOf(await call(busy, "echo_echo", { text: "still open" })), "still open", "the session with a call running was never taken");
  });
});

describe("session caps per client address, and churn", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({
      extraServers: { echo: fixture("echo-server") },
      env: { AGENTBOX_MAX_SESSIONS_PER_CLIENT: "3", AGENTBOX_SESSION_RATE: "2/s" },
    });
  });
  after(() => hub.stop());

  test("one address past its cap gets 429; another address still opens sessions", async () => {
    const statuses: number[] = [];
    let last: Opened | undefined;
    for (let i = 0; i < 4; i++) statuses.push((last = await open(hub, {}, "127.0.0.2")).status);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    assert.match(last!.error!, /this client has 3 open.*AGENTBOX_MAX_SESSIONS_PER_CLIENT.*DELETE/);
    assert.ok(Number(last!.retryAfter) > 0);
    assert.equal((await open(hub, {}, "127.0.0.3")).status, 200, "another client is not locked out");
  });

  test("the cap holds for legacy SSE streams too", async () => {
    for (let i = 0; i < 3; i++) assert.equal((await open(hub, {}, "127.0.0.7")).status, 200);
    const url = new URL(hub.origin);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        { host: url.hostname, port: url.port, path: "/sse", method: "GET", localAddress: "127.0.0.7", headers: { Accept: "text/event-stream" } },
        (res) => {
          resolve(res.statusCode!);
          res.destroy();
        },
      );
      req.on("error", reject);
      req.end();
    });
    assert.equal(status, 429, "127.0.0.7 holds its 3 sessions");
  });

  test("opening sessions faster than the churn rate gets 429 with Retry-After, per client", async () => {
    let refused: Opened | undefined;
    const opened: string[] = [];
    for (let i = 0; i < 40 && !refused; i++) {
      const res = await open(hub, {}, "127.0.0.4");
      if (res.status === 200) {
        opened.push(res.sessionId!);
        // closed at once, so the cap is not what stops it
        await close(hub, res.sessionId!);
      } else refused = res;
    }
    assert.ok(refused, `40 sessions opened and closed back to back were all accepted`);
    assert.equal(refused.status, 429);
    assert.match(refused.error!, /opened too fast.*AGENTBOX_SESSION_RATE/);
    assert.ok(Number(refused.retryAfter) >= 1);
    assert.equal((await open(hub, {}, "127.0.0.5")).status, 200, "another client is not slowed");
  });

  test("a session that never reached a server costs no message to any on close; one that did is told", async () => {
    const untouched = (await open(hub, {}, "127.0.0.6")).sessionId!;
    assert.equal(await close(hub, untouched), 200);
    const client = await hub.connect();
    const used = textOf(await call(client, "echo_whoami"));
    assert.equal(await close(hub, used, { "mcp-protocol-version": "2025-11-25" }), 200);
    // the client's own session is gone: a new one asks
    const asker = await hub.connect();
    const stats = async () => ((await call(asker, "echo_stats")).structuredContent as { closedSessions: string[] }).closedSessions;
    await until("the server a session used to be told it ended", async () => (await stats()).includes(used));
    assert.ok(!(await stats()).includes(untouched), "a server the session never reached is not");
  });
});
