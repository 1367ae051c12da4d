// A third-party server configured `instances: "session"` runs one process per client session: its
// questions (asked without naming any session) reach the one client whose process asked, its state
// is that session's alone, it ends with the session, and a client churning through sessions cannot
// make the hub run more of them than the cap allows. Configured "shared", the same questions are
// refused when two clients have calls in flight, as before.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateMessageRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import fs from "node:fs";
import path from "node:path";
import { isAlive } from "../../../servers/lib/proc-table.js";
import { ConfigError, loadConfig, type ServerConfig } from "../../../hub/config/config.js";
import { call, fixture, startHub, tempDir, textOf, type TestHub } from "../../helpers/hub.js";
import { execEscaping } from "../../helpers/processes.js";
import { until } from "../../helpers/wait.js";

const thirdParty = (instances: "shared" | "session"): Record<string, ServerConfig> => ({ tp: { ...fixture("third-party-server"), instances } });

interface Asker {
  client: Client;
  asked: string[];
}

/** A client that answers sampling with its own name, once `ready()` says so (so two questions can be held open together). */
async function asker(hub: TestHub, name: string, ready: () => boolean = () => true): Promise<Asker> {
  const asked: string[] = [];
  const client = await hub.connect({ name, capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    asked.push((req.params.messages[0].content as { text: string }).text);
    await until(`${name}'s question to be held with the other's`, ready);
    return { role: "assistant", content: { type: "text", text: `${name} answers` }, model: name };
  });
  return { client, asked };
}

/** Keep a call of `client` in flight to the server until the returned function is called. */
async function holdCall(client: Client): Promise<() => Promise<unknown>> {
  const controller = new AbortController();
  let running!: () => void;
  const inFlight = new Promise<void>((resolve) => (running = resolve));
  const held = client
    .callTool({ name: "tp_hold", arguments: { ms: 120_000 } }, CallToolResultSchema, { signal: controller.signal, onprogress: () => running() })
    .catch(() => undefined);
  await inFlight;
  return () => {
    controller.abort();
    return held;
  };
}

/** B's call asks a question (naming no session) while A has a call of its own in flight to the same server. */
async function askWhileAnotherCalls(
  hub: TestHub,
  tool: string,
  args: (a: Asker) => Record<string, unknown>,
): Promise<{ result: CallToolResult; a: Asker; b: Asker }> {
  const a = await asker(hub, "A");
  const b = await asker(hub, "B");
  const release = await holdCall(a.client);
  try {
    return { result: await call(b.client, tool, args(a)), a, b };
  } finally {
    await release();
  }
}

const endSession = (client: Client) => (client.transport as StreamableHTTPClientTransport).terminateSession();

async function serverStatus(hub: TestHub): Promise<{ pid: number | null; sessionInstances?: number }> {
  const status = (await (await fetch(`${hub.origin}/`)).json()) as { servers: Array<{ name: string; pid: number | null; sessionInstances?: number }> };
  return status.servers.find((s) => s.name === "tp")!;
}

const countOf = async (client: Client) => JSON.parse(textOf(await call(client, "tp_count"))) as { count: number; pid: number };

describe('a server with instances "session"', () => {
  let hub: TestHub;
  before(async () => (hub = await startHub({ extraServers: thirdParty("session") })));
  after(() => hub.stop());

  test("two clients asked at the same time by their own calls each get their own question, and answer it", async () => {
    const askers: Asker[] = [];
    // each answer waits until both questions are out: both calls are in flight, both asking, at once
    const both = () => askers.length === 2 && askers.every((x) => x.asked.length > 0);
    const a = await asker(hub, "A", both);
    const b = await asker(hub, "B", both);
    askers.push(a, b);
    const [fromA, fromB] = await Promise.all([call(a.client, "tp_ask", { prompt: "question of A" }), call(b.client, "tp_ask", { prompt: "question of B" })]);
    assert.equal(textOf(fromA), "model said: A answers");
    assert.equal(textOf(fromB), "model said: B answers");
    assert.deepEqual(a.asked, ["question of A"]);
    assert.deepEqual(b.asked, ["question of B"]);
  });

  test("a question naming no session goes to its asker while another client has a call in flight", async () => {
    const { result, a, b } = await askWhileAnotherCalls(hub, "tp_ask", () => ({ prompt: "only for B" }));
    assert.equal(textOf(result), "model said: B answers");
    assert.deepEqual(b.asked, ["only for B"]);
    assert.deepEqual(a.asked, []);
  });

  test("an instance that names another session in _meta still asks only its own", async () => {
    const victim = (a: Asker) => (a.client.transport as StreamableHTTPClientTransport).sessionId!;
    const { result, a, b } = await askWhileAnotherCalls(hub, "tp_ask_as", (holder) => ({ session: victim(holder), prompt: "pretending to be A's" }));
    assert.equal(textOf(result), "model said: B answers");
    assert.deepEqual(a.asked, []);
    assert.deepEqual(b.asked, ["pretending to be A's"]);
  });

  test("each session counts on its own process, apart from the configured one", async () => {
    const a = await hub.connect({ name: "A" });
    const b = await hub.connect({ name: "B" });
    const a1 = await countOf(a);
    const a2 = await countOf(a);
    const b1 = await countOf(b);
    assert.deepEqual([a1.count, a2.count, b1.count], [1, 2, 1]);
    assert.equal(a1.pid, a2.pid);
    assert.notEqual(a1.pid, b1.pid);
    const prototype = await serverStatus(hub);
    assert.ok(prototype.pid !== a1.pid && prototype.pid !== b1.pid, "the configured process serves no session's calls");
  });

  test("closing a session stops its instance and everything the instance started", async () => {
    const c = await hub.connect({ name: "C" });
    const { pid, helper } = JSON.parse(textOf(await call(c, "tp_helper"))) as { pid: number; helper: number };
    assert.ok(isAlive(pid) && isAlive(helper));
    const before = (await serverStatus(hub)).sessionInstances!;
    await endSession(c);
    await until("the session's instance and its helper to be gone", () => !isAlive(pid) && !isAlive(helper), 10_000);
    await until("the instance to be counted no more", async () => (await serverStatus(hub)).sessionInstances === before - 1);
  });
});

describe('a server with instances "shared" (the default)', () => {
  let hub: TestHub;
  before(async () => (hub = await startHub({ extraServers: thirdParty("shared") })));
  after(() => hub.stop());

  test("a question naming no session, with two clients' calls in flight, is refused rather than guessed", async () => {
    const { result, a, b } = await askWhileAnotherCalls(hub, "tp_ask", () => ({ prompt: "whose is this?" }));
    assert.equal(result.isError, true);
    assert.match(textOf(result), /cannot tell which client session/);
    assert.deepEqual(a.asked, []);
    assert.deepEqual(b.asked, []);
  });

  test("its state is one, whoever calls", async () => {
    const a = await hub.connect({ name: "A" });
    const b = await hub.connect({ name: "B" });
    const first = await countOf(a);
    const second = await countOf(b);
    assert.equal(second.count, first.count + 1);
    assert.equal(first.pid, second.pid);
  });
});

describe("the cap on per-session instances", () => {
  let hub: TestHub;
  before(async () => (hub = await startHub({ extraServers: thirdParty("session"), env: { AGENTBOX_SESSION_INSTANCES: "2" } })));
  after(() => hub.stop());

  test("a client churning through sessions gets no more processes than the cap, a clear refusal, and room again once sessions close", async () => {
    const clients = await Promise.all(["one", "two", "three", "four"].map((name) => hub.connect({ name })));
    const results = await Promise.all(clients.map((c) => call(c, "tp_count")));
    const served = results.filter((r) => !r.isError);
    const refused = results.filter((r) => r.isError);
    assert.equal(served.length, 2);
    assert.equal(refused.length, 2);
    for (const r of refused) {
      assert.match(textOf(r), /runs one instance per client session/);
      assert.match(textOf(r), /the limit is 2, AGENTBOX_SESSION_INSTANCES/);
      assert.match(textOf(r), /Close client sessions you no longer use/);
    }
    assert.equal((await serverStatus(hub)).sessionInstances, 2);

    const servedClient = clients[results.indexOf(served[0])];
    const refusedClient = clients[results.indexOf(refused[0])];
    await endSession(servedClient);
    const retried = await until("room for a new instance once a session closed", async () => {
      const r = await call(refusedClient, "tp_count");
      return r.isError ? undefined : r;
    });
    assert.equal((JSON.parse(textOf(retried)) as { count: number }).count, 1);
    assert.equal((await serverStatus(hub)).sessionInstances, 2);
  });
});

describe("a session that idles out", () => {
  let hub: TestHub;
  before(async () => (hub = await startHub({ extraServers: thirdParty("session"), env: { AGENTBOX_SESSION_IDLE_MS: "1500" } })));
  after(() => hub.stop());

  test("has its instance stopped with it", async () => {
    const client = await hub.connect({ name: "idle" });
    const { pid } = await countOf(client);
    assert.ok(isAlive(pid));
    await until("the idle session's instance to be gone", () => !isAlive(pid), 15_000);
    await until("the instance to be counted no more", async () => (await serverStatus(hub)).sessionInstances === 0);
  });
});

describe("the process sweeper", { skip: process.getuid?.() === 0 ? false : "needs root: the sweeper runs only when tenants have uids of their own" }, () => {
  let hub: TestHub;
  before(async () => (hub = await startHub({ servers: ["terminal"], extraServers: thirdParty("session"), env: { AGENTBOX_SWEEP_MS: "200" } })));
  after(() => hub.stop());

  test("spares a session's instance and what it started, as it spares the configured servers", async () => {
    const client = await hub.connect({ name: "swept" });
    const { pid, helper } = JSON.parse(textOf(await call(client, "tp_helper"))) as { pid: number; helper: number };
    // an escapee of the agent's (no session claim, out of every server's tree): each one killed marks a sweep that saw the instance
    for (let sweep = 0; sweep < 2; sweep++) {
      const started = await execEscaping(client, "env -i setsid sleep 60 >/dev/null 2>&1 </dev/null & echo $!");
      const daemon = Number(started.trim());
      assert.ok(daemon > 0 && isAlive(daemon), `the escapee runs: ${started}`);
      await until("a sweep to kill the escapee", () => !isAlive(daemon), 10_000);
    }
    assert.ok(isAlive(pid) && isAlive(helper), "the instance and its helper live");
    assert.equal((await countOf(client)).pid, pid);
  });
});

describe("the instances setting", () => {
  const configWith = (servers: Record<string, unknown>) => {
    const file = path.join(tempDir("agentbox-instances-"), "agentbox.json");
    fs.writeFileSync(file, JSON.stringify({ mcpServers: servers }));
    return file;
  };

  test("is shared unless set, per session when set, and capped at 32 unless AGENTBOX_SESSION_INSTANCES says otherwise", () => {
    const config = loadConfig({ config: configWith({ a: fixture("third-party-server"), b: thirdParty("session").tp }) }, {});
    assert.equal(config.mcpServers.a.instances, undefined);
    assert.equal(config.mcpServers.b.instances, "session");
    assert.equal(config.sessionInstances, 32);
    assert.equal(loadConfig({ config: configWith({}) }, { AGENTBOX_SESSION_INSTANCES: "4" }).sessionInstances, 4);
  });

  test("refuses what cannot work, saying why", () => {
    assert.throws(
      () => loadConfig({ config: configWith({ remote: { url: "http://127.0.0.1:9/mcp", instances: "session" } }) }, {}),
      (err: Error) => err instanceof ConfigError && /instances: .*needs a command \(stdio\), not a url/.test(err.message),
    );
    assert.throws(
      () => loadConfig({ config: configWith({ a: { ...fixture("third-party-server"), instances: "per-call" } }) }, {}),
      (err: Error) => err instanceof ConfigError && /instances/.test(err.message),
    );
    assert.throws(
      () => loadConfig({ config: configWith({}) }, { AGENTBOX_SESSION_INSTANCES: "0" }),
      /AGENTBOX_SESSION_INSTANCES must be a positive whole number/,
    );
  });
});
