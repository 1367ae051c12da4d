// Each tenant sees only its own figures: bob's hub_metrics, hub_status, hub_calls and GET / count his
// own sessions, calls and servers, never alice's activity on the same hub.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { environOf } from "../../helpers/environ.js";
import { call, fixture, startHub, textOf, type TestHub } from "../../helpers/hub.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const OPERATOR = `operator-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

interface Metrics {
  sessions: number;
  calls: { total: number; ok: number; tool_error: number; error: number; rate_limited: number };
  servers: Array<{ name: string; pid: number | null }>;
  hub?: unknown;
  container: Record<string, unknown>;
}

interface Status {
  sessions: number;
  servers: Array<{ tenant?: string; name: string; pid: number | null; state: string }>;
  isolation: { tenants?: number };
}

describe("each tenant sees only its own figures", () => {
  let hub: TestHub;
  let bob: Client;
  const alicePids: number[] = [];

  before(async () => {
    hub = await startHub({
      extraServers: { echo: fixture("echo-server") },
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
      env: { AGENTBOX_METRICS_KEY: OPERATOR },
    });
    // alice is busy: three sessions, calls that succeed, fail as tools and fail outright
    const alice = await Promise.all([1, 2, 3].map(() => hub.connect({ headers: auth(KEY_A) })));
    for (let i = 0; i < 5; i++) assert.equal(textOf(await call(alice[0], "echo_echo", { text: "hi" })), "hi");
    // her server's pid while it runs (after echo_crash it may be between processes)
    const aliceStatus = (await call(alice[0], "hub_status")).structuredContent as unknown as Status;
    alicePids.push(...aliceStatus.servers.flatMap((s) => (s.pid ? [s.pid] : [])));
    assert.ok(alicePids.length > 0, JSON.stringify(aliceStatus.servers));
    await call(alice[1], "echo_echo", {});
    await call(alice[2], "echo_crash");
    bob = await hub.connect({ headers: auth(KEY_B) });
    assert.equal(textOf(await call(bob, "echo_echo", { text: "bob" })), "bob");
  });
  after(() => hub?.stop());

  test("hub_metrics counts bob's sessions and calls, and shows none of the hub's shared use", async () => {
    const data = (await call(bob, "hub_metrics")).structuredContent as unknown as Metrics;
    assert.equal(data.sessions, 1, JSON.stringify(data));
    assert.deepEqual(data.calls, { total: 1, ok: 1, tool_error: 0, error: 0, rate_limited: 0 });
    assert.ok(data.servers.length > 0 && data.servers.every((s) => !alicePids.includes(s.pid ?? -1)), JSON.stringify(data.servers));
    assert.equal(data.hub, undefined, "the hub process's use is every tenant's");
    assert.equal(data.container.loadAverage, undefined, "the container's load is every tenant's");
  });

  test("hub_status and GET / show bob his own sessions and servers", async () => {
    const viaTool = (await call(bob, "hub_status")).structuredContent as unknown as Status;
    const viaHttp = (await (await fetch(hub.origin + "/", { headers: auth(KEY_B) })).json()) as Status;
    for (const status of [viaTool, viaHttp]) {
      assert.equal(status.sessions, 1, JSON.stringify(status));
      assert.ok(status.servers.length > 0 && status.servers.every((s) => s.tenant === "bob"), JSON.stringify(status.servers));
      assert.ok(
        status.servers.every((s) => !alicePids.includes(s.pid ?? -1)),
        JSON.stringify(status.servers),
      );
      assert.equal(status.isolation.tenants, undefined, "how many other tenants there are is not bob's news");
    }
  });

  test("alice sees her own calls", async () => {
    const alice = await hub.connect({ headers: auth(KEY_A) });
    const data = (await call(alice, "hub_metrics")).structuredContent as unknown as Metrics;
    assert.equal(data.sessions, 4);
    assert.equal(data.calls.total, 7, JSON.stringify(data.calls));
    assert.equal(data.calls.ok, 5, JSON.stringify(data.calls));
  });

  test("hub_calls shows bob his own session's calls with their durations, none of alice's", async () => {
    const { calls } = (await call(bob, "hub_calls")).structuredContent as { calls: Array<{ tool: string; outcome: string; durationMs: number; at: string }> };
    assert.deepEqual(
      calls.filter((c) => c.tool.startsWith("echo_")).map((c) => [c.tool, c.outcome]),
      [["echo_echo", "ok"]],
      JSON.stringify(calls),
    );
    assert.ok(
      calls.every((c) => c.durationMs >= 0 && !Number.isNaN(Date.parse(c.at))),
      JSON.stringify(calls),
    );
    const alice = await hub.connect({ headers: auth(KEY_A) });
    assert.deepEqual((await call(alice, "hub_calls")).structuredContent, { calls: [] }, "a new session of alice's has no calls yet");
  });

  test("the hub-wide /metrics opens with the operator's key only, never a tenant's", async () => {
    const metrics = (headers: Record<string, string>) => fetch(`${hub.origin}/metrics`, { headers });
    const asBob = await metrics(auth(KEY_B));
    assert.equal(asBob.status, 403);
    assert.match((await asBob.json()).error.message, /operator's key[^]*hub_metrics/);
    assert.doesNotMatch(await (await metrics(auth(KEY_A))).text(), /agentbox_tool_calls_total/);
    const anonymous = await metrics({});
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers.get("www-authenticate") ?? "", /Bearer/);
    const asOperator = await metrics(auth(OPERATOR));
    assert.equal(asOperator.status, 200);
    assert.match(await asOperator.text(), /agentbox_tool_calls_total\{[^}]*tool="echo_echo"/);
  });

  test("the operator's key opens nothing but /metrics, and no server of a tenant is given it", async () => {
    assert.equal((await fetch(hub.url, { method: "POST", headers: { ...auth(OPERATOR), "Content-Type": "application/json" }, body: "{}" })).status, 401);
    assert.equal((await fetch(`${hub.origin}/`, { headers: auth(OPERATOR) })).status, 401);
    const status = (await (await fetch(`${hub.origin}/`, { headers: auth(KEY_B) })).json()) as Status;
    const pids = status.servers.flatMap((server) => (server.pid ? [server.pid] : []));
    assert.ok(pids.length > 0);
    for (const pid of pids) assert.doesNotMatch(environOf(pid).toString("latin1"), new RegExp(OPERATOR));
  });
});
