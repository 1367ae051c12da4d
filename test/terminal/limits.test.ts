// The terminal server's configurable limits through the hub: sessions per client, idle time,
// the output cap (tail kept), and shutdown killing every terminal and running command.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { leftovers, startTerminal, textOf, type Agent, type Harness } from "./harness.js";
import { until } from "../helpers/wait.js";

describe("terminal limits", () => {
  let h: Harness;
  let agent: Agent;

  before(async () => {
    h = await startTerminal({ AGENTBOX_TERMINAL_MAX_SESSIONS: "2", AGENTBOX_EXEC_MAX_OUTPUT: "1000" });
    agent = await h.connect();
  });
  after(async () => {
    await h?.stop();
  });

  test("a client may hold only so many running terminals, and is told so", async () => {
    const a = await agent.ok("session_create", { shell: "sh" });
    const b = await agent.ok("session_create", { shell: "sh" });
    const refused = await agent.call("session_create", { shell: "sh" });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /already has 2 running terminals.*AGENTBOX_TERMINAL_MAX_SESSIONS=2.*session_kill/);

    // The cap is per client session: another client still gets its own.
    const other = await h.connect();
    const theirs = await other.ok("session_create", { shell: "sh" });

    // A terminal whose program exited no longer counts; a killed one is gone.
    await agent.ok("session_send", { id: a.id, input: "exit\n", waitFor: "never", timeoutMs: 10_000 });
    const c = await agent.ok("session_create", { shell: "sh" });
    await agent.ok("session_kill", { id: b.id });
    const d = await agent.ok("session_create", { shell: "sh" });
    for (const id of [a.id, c.id, d.id]) await agent.ok("session_kill", { id });
    await other.ok("session_kill", { id: theirs.id });
  });

  test("exec keeps the tail of each stream beyond the cap and says it truncated", async () => {
    const r = await agent.ok("exec", { command: "head -c 5000 /dev/zero | tr '\\0' a; echo END; echo small >&2" });
    assert.equal(r.outputCut, true);
    assert.equal(r.stdout.length, 1000);
    assert.ok(r.stdout.endsWith("aaaaEND\n"));
    assert.equal(r.droppedBytes.stdout, 4004);
    assert.equal(r.stderr, "small\n");
    assert.equal(r.droppedBytes.stderr, 0);
  });

  test("a terminal's scrollback keeps the tail and reports unread output it dropped", async () => {
    const t = await agent.ok("session_create", { shell: "sh", env: { PS1: "$ " } });
    await agent.ok("session_send", { id: t.id, input: "seq 1 2000; echo DONE\n", waitFor: "^DONE" });
    await agent.ok("session_send", { id: t.id, input: "seq 1 2000; echo AGAIN\n" });
    const r = await agent.ok("session_read", { id: t.id, waitFor: "^AGAIN" });
    assert.ok(r.droppedBytes > 0);
    assert.match(r.output, /^2000\nAGAIN$/m);
    await agent.ok("session_kill", { id: t.id });
  });

  test("shutdown kills every terminal and running command", async () => {
    const server = await h.serverPid();
    await agent.ok("session_create", { shell: "sh", args: ["-c", "sleep 300 & sleep 301"] });
    const pending = agent.call("exec", { command: "sleep 302 & sleep 303", timeoutMs: 60_000 }).catch(() => undefined);
    await until("the command to run", () => leftovers(server).some((l) => l.includes("sleep 303")));
    await h.stop();
    await pending;
    await until("nothing the server started to be left", () => leftovers(server).length === 0 && !fs.existsSync(`/proc/${server}`));
  });
});

describe("terminal idle limit", () => {
  let h: Harness;

  before(async () => {
    h = await startTerminal({ AGENTBOX_TERMINAL_IDLE_MS: "1000" });
  });
  after(async () => {
    await h?.stop();
  });

  test("a terminal left untouched for the idle time is killed", async () => {
    const agent = await h.connect();
    const t = await agent.ok("session_create", { shell: "sh" });
    await until("the idle terminal to be gone", async () => (await agent.ok("session_list")).terminals.length === 0);
    assert.equal(fs.existsSync(`/proc/${t.pid}`), false);
    const r = await agent.call("session_read", { id: t.id });
    assert.equal(r.isError, true);
  });
});
