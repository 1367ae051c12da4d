// A disk budget per tenant (issue 21): tenant alice, with a 20 MiB budget, fills it from her
// terminal and then tries to write past it every way an agent would; bob, on the same hub and the
// same filesystem, keeps writing, running commands and starting servers throughout.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const MIB = 1024 * 1024;
const skip = process.getuid?.() === 0 ? false : "needs root: budgets hold for tenants the hub runs under their own uids";
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

const exec = async (client: Client, command: string) => {
  const result = await call(client, "terminal_exec", { command, timeoutMs: 60_000 });
  return { text: textOf(result), ok: !result.isError && /^Exit code 0\./.test(textOf(result)) };
};

/** A measurement walks every tenant's folders and /tmp, every 2 s or ten times as long as the last walk took: long on a busy machine. */
const MEASURED_WITHIN_MS = 120_000;

const budgetRefusal = /Disk budget used up: this tenant's files take [\d.]+ of its 20\.0 MiB[^]*Delete files/;

describe("disk budget per tenant", { skip }, () => {
  let hub: TestHub;
  let alice: Client;
  let bob: Client;
  const aliceDir = () => path.join(hub.workspace, "alice");

  before(async () => {
    hub = await startHub({
      servers: ["terminal", "file"],
      // the variable sets everyone's budget; bob's own limit overrides it
      env: { AGENTBOX_DISK_MIB: "20" },
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B, limits: { diskMiB: 64 } } } },
    });
    alice = await hub.connect({ headers: auth(KEY_A) });
    bob = await hub.connect({ headers: auth(KEY_B) });
  });
  after(() => hub?.stop());

  // One story, in order: each step starts where the one before left alice (over budget, then
  // locked, then back under), so they run as the steps of one test, the rest skipped once one fails.
  const steps: Array<{ name: string; run: () => Promise<void> }> = [];
  const step = (name: string, run: () => Promise<void>) => void steps.push({ name, run });

  step("one dd cannot write past the budget, and the shell says why", async () => {
    const dd = await exec(alice, "dd if=/dev/zero of=big bs=1M count=100");
    assert.equal(dd.ok, false, dd.text);
    assert.match(dd.text, /SIGXFSZ|File size limit exceeded|File too large/);
    assert.match(dd.text, /file size limit, which is this tenant's disk budget \(([\d.]+ of 20\.0 MiB|not measured yet)[^]*Delete files/);
    assert.ok(fs.statSync(path.join(aliceDir(), "big")).size <= 20 * MIB);
  });

  step("over budget, alice's file tools say so and her shell cannot write", async () => {
    // within seconds the hub measures her over budget and tells her (and only her)
    const disk = await until(
      "alice to be measured over budget",
      async () => {
        const status = await (await fetch(`${hub.origin}/`, { headers: auth(KEY_A) })).json();
        return status.disk?.frozen ? (status.disk as { usedBytes: number; budgetBytes: number }) : undefined;
      },
      MEASURED_WITHIN_MS,
      250,
    );
    assert.equal(disk.budgetBytes, 20 * MIB);
    assert.ok(disk.usedBytes >= 20 * MIB);
    const result = await call(alice, "file_write", { path: "more.bin", content: "x".repeat(MIB) });
    assert.equal(result.isError, true);
    assert.match(textOf(result), budgetRefusal);
    assert.equal(fs.existsSync(path.join(aliceDir(), "more.bin")), false);
    const edit = await call(alice, "file_write", { path: "small.txt", content: "hello" });
    assert.equal(edit.isError, true);
    assert.match(textOf(edit), budgetRefusal);
    const shell = await exec(alice, "head -c 4096 /dev/zero > small.bin");
    assert.equal(shell.ok, false, shell.text);
    assert.ok(!fs.existsSync(path.join(aliceDir(), "small.bin")) || fs.statSync(path.join(aliceDir(), "small.bin")).size === 0);
  });

  step("bob still writes, runs commands and starts his servers", async () => {
    const written = await call(bob, "file_write", { path: "notes.bin", content: "y".repeat(MIB) });
    assert.equal(written.isError, undefined, textOf(written));
    const shell = await exec(bob, "head -c 2097152 /dev/zero > two.bin && stat -c %s two.bin");
    assert.ok(shell.ok, shell.text);
    assert.match(shell.text, /2097152/);
    // kill bob's terminal server: the hub starts it again, as bob, with his budget
    const pidOf = async () =>
      ((await (await fetch(`${hub.origin}/`, { headers: auth(KEY_B) })).json()).servers as Array<{ name: string; pid: number | null; state: string }>).find(
        (s) => s.name === "terminal",
      );
    const before = (await pidOf())!.pid!;
    process.kill(before, "SIGKILL");
    await until("bob's terminal server to restart", async () => {
      const now = await pidOf();
      return now?.state === "ready" && now.pid && now.pid !== before;
    });
    const after = await exec(bob, "echo started > again.txt && cat again.txt");
    assert.ok(after.ok, after.text);
  });

  step("raising the soft limit back, or writing many files, is stopped and locks alice out", async () => {
    // what a hostile agent does once frozen: lift its own soft limit to the hard one, then write
    // many files below the per-file limit, for longer than the hub takes to notice
    const attack = await exec(alice, "ulimit -S -f $(ulimit -H -f); for i in $(seq 1 300); do head -c 1048576 /dev/zero > f$i; sleep 0.1; done; echo survived");
    assert.equal(attack.ok, false, attack.text);
    assert.doesNotMatch(attack.text, /survived/);
    const written = fs.readdirSync(aliceDir()).filter((f) => /^f\d+$/.test(f)).length;
    assert.ok(written < 300, `${written} files written`);
    // locked: no command of alice's can lift its file size limit any more
    const hard = await until(
      "alice to be locked",
      async () => {
        const r = await exec(alice, "ulimit -H -f");
        return /--- stdout ---\n0\n/.test(r.text) ? r.text : undefined;
      },
      MEASURED_WITHIN_MS,
      250,
    );
    assert.match(hard, /--- stdout ---\n0\n/);
  });

  step("space preallocated past a file's end, which no limit stops, is given back", async () => {
    // fallocate --keep-size allocates without extending the file, so RLIMIT_FSIZE never sees it;
    // read-only, so that a truncation by the tenant's own uid would be refused
    const attack = await exec(alice, "touch pre && fallocate --keep-size -l 40M pre && chmod 444 pre && du -k pre");
    assert.ok(attack.ok, attack.text);
    const pre = path.join(aliceDir(), "pre");
    // freed, and read-only again: the hub makes the file writable just for the truncation, so the
    // blocks can be seen gone a moment before the mode is back
    const freed = (st: fs.Stats) => st.blocks * 512 < MIB && (st.mode & 0o777) === 0o444;
    await until("the preallocated blocks to be freed and the file read-only again", () => freed(fs.statSync(pre)), MEASURED_WITHIN_MS, 250);
    assert.equal(fs.statSync(pre).size, 0);
  });

  step("after alice deletes files she can write again", async () => {
    for (const name of fs.readdirSync(aliceDir()).filter((f) => f === "big" || f === "pre" || /^f\d+$/.test(f))) {
      const removed = await call(alice, "file_delete", { path: name });
      assert.equal(removed.isError, undefined, textOf(removed));
    }
    const text = await until(
      "alice's file_write to succeed again",
      async () => {
        const result = await call(alice, "file_write", { path: "after.txt", content: "back under budget" }).catch(() => undefined);
        return result && !result.isError ? textOf(result) : undefined;
      },
      MEASURED_WITHIN_MS,
      250,
    );
    assert.ok(text);
    assert.equal(fs.readFileSync(path.join(aliceDir(), "after.txt"), "utf8"), "back under budget");
    const shell = await until(
      "alice's shell to write again",
      async () => {
        const r = await exec(alice, "head -c 1048576 /dev/zero > again.bin && stat -c %s again.bin").catch(() => undefined);
        return r?.ok ? r.text : undefined;
      },
      MEASURED_WITHIN_MS,
      250,
    );
    assert.match(shell, /1048576/);
  });

  test("alice fills her budget and writes past it every way an agent would, then deletes files and writes again; bob works throughout", async (t) => {
    let failed: string | undefined;
    for (const { name, run } of steps) {
      await t.test(name, { skip: failed ? `'${failed}' failed, and this step starts where it left alice` : false }, async () => {
        try {
          await run();
        } catch (err) {
          failed = name;
          throw err;
        }
      });
    }
  });
});

describe("a tenant that cripples the hub's helpers", { skip }, () => {
  test("still has the space it preallocated past its files' ends given back", async () => {
    const hub = await startHub({
      servers: ["terminal"],
      env: { AGENTBOX_DISK_MIB: "20" },
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
    });
    try {
      const alice = await hub.connect({ headers: auth(KEY_A) });
      // under budget until the fallocate, which no limit stops: the measurement after it freezes her and
      // the hub truncates the file, as her uid, while her process sets the CPU limit of every process
      // of her uid that runs the truncation to nothing; the command waits for the blocks to go
      const wait = 'for i in $(seq 450); do [ "$(stat -c %b pre)" -lt 2048 ] && break; sleep 0.1; done; stat -c "blocks %b" pre';
      const attack = await exec(alice, `/usr/bin/python3 -c '${CRIPPLER}' & sleep 0.5 && touch pre && fallocate --keep-size -l 40M pre && ${wait}`);
      assert.ok(attack.ok, attack.text);
      const blocks = Number(/blocks (\d+)/.exec(attack.text)?.[1]);
      assert.ok(blocks < 2048, `the blocks are given back while her process races the hub: ${attack.text}`);
      assert.ok(hub.logs.some((l) => l.includes("freed the space a tenant over its disk budget had preallocated")));
    } finally {
      await hub.stop();
    }
  });
});

// Lowers to nothing the CPU limit of every process of its uid running find (the hub's truncation runs
// as the tenant), as soon as it sees one: prlimit(2) needs only the same uid and gid. It leaves the
// hub's prlimit alone: a freeze that failed would look like a tenant raising its limit, and be killed.
const CRIPPLER = [
  "import os, resource",
  "while True:",
  '    for name in os.listdir("/proc"):',
  "        try:",
  '            if not name.isdigit() or os.stat("/proc/" + name).st_uid != os.getuid(): continue',
  '            comm = open("/proc/" + name + "/comm").read().strip()',
  '            if comm == "find": resource.prlimit(int(name), resource.RLIMIT_CPU, (0, 0))',
  "        except (OSError, ValueError): pass",
].join("\n");
