// A recording counts against its tenant's disk budget: a tenant with 8 MiB, 7 of them taken by a
// file, records a terminal that prints megabytes. The recording stops short of the budget, its end
// marked in the file and its note in the listing and in the next result about the terminal, and
// nothing else fails: the agent's calls keep working, the hub and the terminal server keep running.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { openTerminal, parseCast, recordingsOf, run } from "./recording-helpers.js";

const MIB = 1024 * 1024;
const KEY = `key-${randomBytes(16).toString("hex")}`;
const skip = process.getuid?.() === 0 ? false : "needs root: budgets hold for tenants the hub runs under their own uids";
/** A measurement walks the tenant's folders every 2 s, or ten times as long as the last walk took: long on a busy machine. */
const MEASURED_WITHIN_MS = 120_000;

describe("a recording that fills the disk budget", { skip }, () => {
  let hub: TestHub;
  let client: Client;

  before(async () => {
    // with a key, GET / tells the tenant its disk use
    hub = await startHub({ servers: ["terminal"], env: { AGENTBOX_DISK_MIB: "8", AGENTBOX_API_KEY: KEY } });
    client = await hub.connect({ headers: { Authorization: `Bearer ${KEY}` } });
  });
  after(() => hub?.stop());

  const status = async () =>
    (await fetch(`${hub.origin}/`, { headers: { Authorization: `Bearer ${KEY}` } })).json() as Promise<{
      disk?: { usedBytes: number };
      servers: Array<{ name: string; pid: number; state: string }>;
    }>;

  test("stops with a note; the agent's calls, the server and the hub go on", async () => {
    const { id, recording } = await openTerminal(client, { record: true });
    await run(client, id, "head -c 7340032 /dev/zero > filler && echo filled-$?", /filled-0/);
    await until("the filler to be measured", async () => ((await status()).disk?.usedBytes ?? 0) >= 7 * MIB, MEASURED_WITHIN_MS, 250);
    const serverPid = (await status()).servers.find((s) => s.name === "terminal")!.pid;

    // about 4 MB of output: more than the budget has left
    const printed = await run(client, id, "head -c 3000000 /dev/urandom | base64 -w 0; echo; echo printed-$((40+2))", /printed-42/);
    assert.match(printed, /printed-42/);
    // the recorder writes behind the terminal (up to 16 MiB waiting): on a busy machine it finishes well after the command
    const listed = await until("the recording to stop", async () => (await recordingsOf(client)).find((r) => r.id === recording && r.endedAt), 60_000, 250);
    assert.match(listed.note ?? "", /disk budget ran out/);
    assert.ok(listed.bytes < 2 * MIB, `${listed.bytes} bytes recorded`);

    const next = await call(client, "terminal_session_send", { id, input: "echo still-here\n", waitFor: "still-here\\s", timeoutMs: 20_000 });
    assert.ok(!next.isError, textOf(next));
    // the result about the terminal after the stop (the one that printed, or the next) says so, once
    const told = [printed, textOf(next)].filter((text) => /Recording stopped: the tenant's disk budget ran out\. \(recording terminal-/.test(text));
    assert.equal(told.length, 1, [printed.slice(0, 300), textOf(next)].join("\n---\n"));
    const exec = await call(client, "terminal_exec", { command: "echo exec-works" });
    assert.ok(!exec.isError, textOf(exec));

    const body = await (await fetch(listed.url)).text();
    const { header, events } = parseCast(body);
    assert.equal(header.version, 2);
    assert.deepEqual(events.at(-1)?.slice(1), ["m", "Recording stopped: the tenant's disk budget ran out."], "the end is marked");

    const after = await status();
    assert.equal(after.servers.find((s) => s.name === "terminal")!.pid, serverPid, "the terminal server did not restart");
    assert.equal(after.servers.find((s) => s.name === "terminal")!.state, "ready");
  });
});
