// Timeouts, cancellation and client-session isolation of code_execute, through the hub.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { run, openCodeHub, type CodeHub } from "./harness.js";
import { isAlive as alive } from "../../servers/lib/proc-table.js";
import { until } from "../helpers/wait.js";

type Listed = Array<{ name: string; language: string; busy: boolean }>;
const listed = async (client: Client) => ((await client.callTool({ name: "code_sessions", arguments: {} })).structuredContent as { sessions: Listed }).sessions;

function waitBusy(client: Client, name: string): Promise<true> {
  return until(`session ${name} to be busy`, async () => (await listed(client)).some((s) => s.name === name && s.language === "python" && s.busy), 20_000);
}

function waitIdle(client: Client, name = "default"): Promise<true> {
  return until(`session ${name} to be idle`, async () => !(await listed(client)).some((s) => s.name === name && s.busy), 10_000);
}

describe("code_execute: interrupts and isolation", () => {
  let hub: CodeHub;
  let client: Client;

  before(async () => ({ hub, client } = await openCodeHub()));
  after(() => hub?.stop());

  test("Python: a while True loop is interrupted by the timeout and the state survives", async () => {
    await run(client, "python", "survivor = 'still here'");
    const looped = await run(client, "python", "import time\nticks = 0\nwhile True:\n    ticks += 1\n    time.sleep(0.005)", { timeoutMs: 400 });
    assert.equal(looped.result.isError, true);
    assert.equal(looped.data.status, "timeout");
    assert.equal(looped.data.stateKept, true);
    assert.match(looped.data.error!, /KeyboardInterrupt/);
    assert.match(looped.data.note!, /state survived/);
    const after = await run(client, "python", "(survivor, ticks > 0)");
    assert.equal(after.text, "('still here', True)");
  });

  test("Python: code that ignores SIGINT is killed and the session clearly restarted", async () => {
    await run(client, "python", "doomed = 1");
    const stubborn = await run(client, "python", "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass", { timeoutMs: 300 });
    assert.equal(stubborn.result.isError, true);
    assert.equal(stubborn.data.status, "timeout");
    assert.equal(stubborn.data.stateKept, false);
    assert.match(stubborn.data.note!, /killed and restarted/);
    const fresh = await run(client, "python", "'doomed' in globals()");
    assert.equal(fresh.text, "False", "a fresh interpreter");
    assert.equal((await run(client, "python", "6 * 7")).text, "42", "and it works");
  });

  test("JavaScript: a synchronous loop and a pending await are interrupted, state kept", async () => {
    await run(client, "javascript", "const keep = 'js state'");
    const spin = await run(client, "javascript", "while (true) {}", { timeoutMs: 300 });
    assert.equal(spin.data.status, "timeout");
    assert.equal(spin.data.stateKept, true);
    const waiting = await run(client, "javascript", "await new Promise(() => {})", { timeoutMs: 300 });
    assert.equal(waiting.data.status, "timeout");
    assert.equal(waiting.data.stateKept, true);
    assert.equal((await run(client, "javascript", "keep")).text, "'js state'");
  });

  test("JavaScript: a loop after an await cannot take SIGINT: killed and restarted", async () => {
    await run(client, "javascript", "const lost = 1");
    const spin = await run(client, "javascript", "await null\nwhile (true) {}", { timeoutMs: 300 });
    assert.equal(spin.data.status, "timeout");
    assert.equal(spin.data.stateKept, false);
    assert.match(spin.data.note!, /restarted/);
    assert.equal((await run(client, "javascript", "typeof lost")).text, "'undefined'");
  });

  test("an interpreter that dies is replaced and the agent is told", async () => {
    await run(client, "python", "gone_soon = 1");
    const died = await run(client, "python", "import os\nprint('last words', flush=True)\nos._exit(3)");
    assert.equal(died.data.status, "crashed");
    assert.equal(died.data.stateKept, false);
    assert.equal(died.data.stdout, "last words", "the text's [stdout] part");
    assert.match(died.data.note!, /died while running/);
    assert.equal((await run(client, "python", "'gone_soon' in globals()")).text, "False");
  });

  test("a reset stops a running execute, which says so", async () => {
    const pending = run(client, "python", "import time\nwhile True:\n    time.sleep(0.01)", { session: "busy" });
    await waitBusy(client, "busy");
    const reset = await client.callTool({ name: "code_reset", arguments: { language: "python", session: "busy" } });
    assert.equal(reset.isError, undefined);
    const ended = await pending;
    assert.ok(ended.data, ended.text);
    assert.equal(ended.data.status, "crashed");
    assert.equal(ended.data.stateKept, false);
    assert.match(ended.data.note!, /was reset while this code ran/);
    assert.equal((await run(client, "python", "1 + 1", { session: "busy" })).text, "2");
    const listed = await client.callTool({ name: "code_sessions", arguments: {} });
    const busy = (listed.structuredContent as { sessions: Array<{ name: string; pid: number }> }).sessions.filter((s) => s.name === "busy");
    assert.equal(busy.length, 1);
    assert.ok(alive(busy[0].pid));
  });

  test("cancelling the call interrupts the running code", async () => {
    await run(client, "python", "import os, time\nbeats = 0");
    const controller = new AbortController();
    const pending = client.callTool(
      { name: "code_execute", arguments: { language: "python", code: "while True:\n    beats += 1\n    time.sleep(0.01)" } },
      undefined,
      { signal: controller.signal },
    );
    // cancel once the loop is really running
    await waitBusy(client, "default");
    await new Promise((r) => setTimeout(r, 200));
    controller.abort();
    await assert.rejects(pending);
    await waitIdle(client);
    const first = await run(client, "python", "beats");
    await new Promise((r) => setTimeout(r, 300));
    const second = await run(client, "python", "beats");
    assert.ok(Number(first.text) > 0, "the loop ran");
    assert.equal(second.text, first.text, "the loop stopped counting after the cancellation");
  });

  test("a call right after a cancellation waits for the interrupt to finish, then runs", async () => {
    await run(client, "python", "import time\nafter_cancel = 0");
    const controller = new AbortController();
    // the interrupt takes a while (the code cleans up for 0.5 s), well within the interrupt grace
    const code = "try:\n    while True:\n        time.sleep(0.01)\nexcept KeyboardInterrupt:\n    time.sleep(0.5)\n    after_cancel = 1\n    raise";
    const pending = client.callTool({ name: "code_execute", arguments: { language: "python", code } }, undefined, { signal: controller.signal });
    await waitBusy(client, "default");
    controller.abort();
    await assert.rejects(pending);
    const next = await run(client, "python", "after_cancel + 41");
    assert.equal(next.result.isError, undefined, next.text);
    assert.equal(next.text, "42", "ran after the interrupted code finished its cleanup");
  });

  test("two client sessions never see each other's interpreters", async () => {
    const other = await hub.connect();
    await run(client, "python", "mine = 'client one'");
    await run(client, "javascript", "globalThis.mineJs = 'client one'");
    const py = await run(other, "python", "mine");
    assert.equal(py.result.isError, true);
    assert.match(py.data.error!, /NameError/);
    const js = await run(other, "javascript", "typeof mineJs");
    assert.equal(js.text, "'undefined'");
    await run(other, "python", "mine = 'client two'");
    assert.equal((await run(client, "python", "mine")).text, "'client one'");

    const listed = await other.callTool({ name: "code_sessions", arguments: {} });
    const names = (listed.structuredContent as { sessions: Array<{ name: string; language: string }> }).sessions.map((s) => `${s.language}:${s.name}`);
    assert.deepEqual(names.sort(), ["javascript:default", "python:default"], "only its own sessions are listed");

    // a client that goes away takes its interpreters with it
    const pidsBefore = (await other.callTool({ name: "code_sessions", arguments: {} })).structuredContent as { sessions: Array<{ pid: number }> };
    await (other.transport as StreamableHTTPClientTransport).terminateSession();
    await other.close();
    const pids = pidsBefore.sessions.map((s) => s.pid);
    await until("the interpreters of a closed client session to stop", () => !pids.some(alive));
  });
});
