// AGENTBOX_REPLICA names the replica in every session id the hub mints and in what it reports;
// SIGTERM drains: not ready at once, no new sessions, calls in flight finish, then the hub exits;
// a 2026 retry whose call was lost with a restart is told so.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { bundled, loadConfig } from "../../hub/config/config.js";
import { call, fixture, startHub, textOf, type TestHub } from "../helpers/hub.js";
import { both, eventStream, initialize, json, post } from "../helpers/raw-http.js";
import { postModern, samplingAnswer, samplingCall } from "../hub/modern/modern-client.js";
import { until } from "../helpers/wait.js";
import { callAsTask, created, taskRequest, textOf as taskText, untilStatus } from "./task-requests.js";

const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };

describe("AGENTBOX_REPLICA", () => {
  let hub: TestHub;
  before(async () => {
    hub = await startHub({ extraServers: { echo: fixture("echo-server") }, env: { AGENTBOX_REPLICA: "r7" } });
  });
  after(() => hub.stop());

  it("begins every Streamable HTTP session id with the replica name and a dot", async () => {
    const ids = await Promise.all([initialize(hub), initialize(hub)]);
    for (const id of ids) assert.match(id, /^r7\.[0-9a-f-]{36}$/);
    assert.notEqual(ids[0], ids[1]);
  });

  it("gives the legacy SSE endpoint a routable sessionId too, and the id works", async () => {
    const res = await fetch(`${hub.origin}/sse`, { headers: { Accept: "text/event-stream" } });
    const stream = eventStream(res);
    try {
      const endpoint = (await stream.next())!;
      assert.equal(endpoint.event, "endpoint");
      assert.match(endpoint.data, /^\/messages\?sessionId=r7\.[0-9a-f-]{36}$/);
      const sent = await fetch(hub.origin + endpoint.data, { method: "POST", headers: json, body: JSON.stringify(INIT) });
      assert.equal(sent.status, 202);
      const reply = JSON.parse((await stream.next())!.data);
      assert.equal(reply.id, 1);
      assert.equal(reply.result.serverInfo.name, "agentbox");
    } finally {
      await stream.close();
    }
  });

  it("reports the replica on GET /, in /metrics and in hub_status", async () => {
    const root = (await (await fetch(hub.origin)).json()) as { replica?: string };
    assert.equal(root.replica, "r7");
    const metrics = await (await fetch(`${hub.origin}/metrics`)).text();
    assert.match(metrics, /^agentbox_replica_info\{replica="r7"\} 1$/m);
    assert.match(metrics, /^agentbox_draining 0$/m);
    const client = await hub.connect();
    const status = await call(client, "hub_status");
    assert.equal((status.structuredContent as { replica?: string }).replica, "r7");
  });

  it("refuses to start with a name a router could not use as a host name, saying what is allowed", () => {
    const allowed = /AGENTBOX_REPLICA must be a DNS label .*lower-case letters, digits and '-'/;
    // each name as the hub's configuration reads it; then one, end to end, as the hub refuses to start
    for (const bad of ["R1", "-r1", "r1-", "r_1", "r1.evil", "a".repeat(64), "r1/../x"]) {
      assert.throws(() => loadConfig({}, { AGENTBOX_REPLICA: bad }), allowed, `AGENTBOX_REPLICA=${bad} should be refused`);
    }
    const run = spawnSync(process.execPath, [bundled("hub"), "--port", "0"], {
      env: { ...process.env, AGENTBOX_REPLICA: "r1.evil" },
      encoding: "utf8",
      timeout: 20_000,
    });
    assert.equal(run.status, 2, `AGENTBOX_REPLICA=r1.evil should be refused:\n${run.stderr}`);
    assert.match(run.stderr, allowed);
  });
});

describe("without AGENTBOX_REPLICA", () => {
  it("mints bare uuids and reports no replica", async () => {
    const hub = await startHub({ servers: [] });
    try {
      assert.match(await initialize(hub), /^[0-9a-f-]{36}$/);
      const root = (await (await fetch(hub.origin)).json()) as Record<string, unknown>;
      assert.equal("replica" in root, false);
      assert.doesNotMatch(await (await fetch(`${hub.origin}/metrics`)).text(), /agentbox_replica_info/);
    } finally {
      await hub.stop();
    }
  });
});

describe("drain on SIGTERM", () => {
  it("stops being ready, refuses new sessions, lets the call in flight finish, then exits", async () => {
    const hub = await startHub({ extraServers: { echo: fixture("echo-server") }, env: { AGENTBOX_REPLICA: "r1", AGENTBOX_DRAIN_MS: "60000" } });
    try {
      const client = await hub.connect();
      const other = await hub.connect();
      // 40 steps of 100 ms: long enough for the checks below, which all run while it is in flight
      let started!: () => void;
      const firstStep = new Promise<void>((r) => (started = r));
      let finished = false;
      const slow = client
        .callTool({ name: "echo_slow", arguments: { steps: 40, delayMs: 100 } }, undefined, { onprogress: () => started(), timeout: 120_000 })
        .finally(() => (finished = true));
      await firstStep;
      const exited = new Promise<number | null>((r) => hub.process.once("exit", (code) => r(code)));
      hub.process.kill("SIGTERM");

      // not ready, with a reason, as soon as the signal is handled
      const ready = await until("the replica to stop being ready", async () => {
        const res = await fetch(`${hub.origin}/readyz`);
        const body = (await res.json()) as { ready: boolean; reason?: string };
        return res.status !== 200 && { status: res.status, body };
      });
      assert.equal(ready.status, 503);
      assert.match(ready.body.reason ?? "", /draining/);

      // a new session is refused with 503 and a JSON-RPC error naming the replica
      const refused = await post(hub, INIT, both);
      assert.equal(refused.res.status, 503);
      assert.match(refused.body.error.message, /Replica 'r1' is draining .*takes no new sessions/);
      assert.equal(refused.res.headers.get("mcp-session-id"), null);
      // so is a sessionless plain JSON call, which would start an implicit session
      const sessionless = await post(hub, { jsonrpc: "2.0", id: 2, method: "tools/list" });
      assert.equal(sessionless.res.status, 503);
      // a session already here goes on working
      assert.equal(textOf(await call(other, "echo_echo", { text: "still here" })), "still here");
      assert.equal(finished, false, "the checks above ran while the long call was in flight");

      const result = (await slow) as { content: Array<{ text: string }>; isError?: boolean };
      assert.equal(result.isError, undefined);
      assert.equal(result.content[0].text, "done after 40 steps");
      assert.equal(await exited, 0);
    } finally {
      await hub.stop();
    }
  });

  it("cuts calls still running when AGENTBOX_DRAIN_MS runs out, and exits", async () => {
    const hub = await startHub({ extraServers: { echo: fixture("echo-server") }, env: { AGENTBOX_DRAIN_MS: "300" } });
    try {
      const client = await hub.connect();
      let started!: () => void;
      const firstStep = new Promise<void>((r) => (started = r));
      // a call that would take 1000 s: the bound, not the call, decides when the hub stops
      const slow = client.callTool({ name: "echo_slow", arguments: { steps: 1000, delayMs: 1000 } }, undefined, { onprogress: () => started(), timeout: 120_000 });
      slow.catch(() => undefined);
      await firstStep;
      const exited = new Promise<number | null>((r) => hub.process.once("exit", (code) => r(code)));
      hub.process.kill("SIGTERM");
      assert.equal(await exited, 0);
      assert.ok(hub.logs.some((l) => l.includes('"drained"') && l.includes('"callsCut":1')), hub.logs.slice(-5).join("\n"));
    } finally {
      await hub.stop();
    }
  });
});

describe("a 2026-07-28 retry whose call this process does not hold", () => {
  it("is told its replica restarted and the call was lost, and to call the tool again", async () => {
    const options = { extraServers: { conformance: fixture("conformance-server") }, env: { AGENTBOX_REPLICA: "r3" } };
    const before = await startHub(options);
    let result: { requestState: string; inputRequests: Record<string, unknown> };
    try {
      const first = await postModern(before, samplingCall());
      result = first.json?.result as typeof result;
      assert.ok(result?.requestState, first.text);
    } finally {
      await before.stop();
    }
    const after = await startHub(options);
    try {
      const [inputKey] = Object.keys(result.inputRequests);
      const lost = await postModern(after, samplingCall({ requestState: result.requestState, inputResponses: { [inputKey]: samplingAnswer("too late") } }));
      assert.equal(lost.json?.error?.code, -32602, lost.text);
      assert.match(lost.json!.error!.message, /held by replica 'r3' before it restarted, and was lost with the restart\. Send the request again/);
    } finally {
      await after.stop();
    }
  });
});

describe("tasks (the tasks extension) across a drain and a restart", () => {
  const conformance = { conformance: { ...fixture("conformance-server"), prefix: "" } };

  it("a draining replica takes tasks/update for its task waiting on input, refuses a new task, and exits once the task completes", async () => {
    const hub = await startHub({ extraServers: conformance, env: { AGENTBOX_REPLICA: "r1", AGENTBOX_DRAIN_MS: "60000" } });
    try {
      const taskId = created(await callAsTask(hub, undefined, "confirm_delete", { filename: "kept.txt" }));
      assert.match(taskId, /^r1\.[0-9a-f]{16}\.[0-9a-f-]{36}$/);
      const waiting = await untilStatus(hub, undefined, taskId, ["input_required", "completed", "failed", "cancelled"]);
      assert.equal(waiting.status, "input_required", JSON.stringify(waiting));
      const exited = new Promise<number | null>((r) => hub.process.once("exit", (code) => r(code)));
      hub.process.kill("SIGTERM");
      await until("the hub to drain", async () => (await fetch(`${hub.origin}/readyz`)).status === 503);

      const refused = await callAsTask(hub, undefined, "slow_compute", { seconds: 0 });
      assert.equal(refused.res.status, 503, refused.text);
      // polls and the answer to its question are served: the task is this replica's
      assert.equal((await untilStatus(hub, undefined, taskId, ["input_required"])).status, "input_required");
      const [key] = Object.keys(waiting.inputRequests as Record<string, unknown>);
      const ack = await taskRequest(hub, undefined, "tasks/update", taskId, { inputResponses: { [key]: { action: "accept", content: { confirm: true } } } });
      assert.equal(ack.json?.result?.resultType, "complete", `${ack.res.status} ${ack.text}`);
      const done = await untilStatus(hub, undefined, taskId, ["completed", "failed", "cancelled"]);
      assert.equal(done.status, "completed", JSON.stringify(done));
      assert.equal(taskText(done.result), "Deleted kept.txt");
      // the drain (60 s) ends with the task, not at its bound
      assert.equal(await exited, 0);
      assert.ok(hub.logs.some((l) => l.includes('"drained"') && !l.includes("callsCut")), hub.logs.slice(-5).join("\n"));
    } finally {
      await hub.stop();
    }
  });

  it("without AGENTBOX_REPLICA, a task id from before a restart is told the hub restarted and to start the call again", async () => {
    const first = await startHub({ extraServers: conformance });
    let taskId: string;
    try {
      taskId = created(await callAsTask(first, undefined, "slow_compute", { seconds: 30 }));
      assert.match(taskId, /^[0-9a-f]{16}\.[0-9a-f-]{36}$/);
    } finally {
      await first.stop();
    }
    const second = await startHub({ extraServers: conformance });
    try {
      const lost = await taskRequest(second, undefined, "tasks/get", taskId);
      assert.equal(lost.json?.error?.code, -32602, lost.text);
      assert.match(lost.json!.error!.message, /held by this agentbox before it restarted, and was lost with the restart\. Its work is lost: start the call again/);
      // an id of this very process that it never minted is still just unknown
      const unknown = await taskRequest(second, undefined, "tasks/get", "not-a-task");
      assert.match(unknown.json?.error?.message ?? "", /^Unknown task/);
    } finally {
      await second.stop();
    }
  });
});
