// Issue 21's measurement, replayed: two tenants on a 300 MB filesystem with the default budgets,
// and alice writes as fast as she can, in many files, past the per-file limit. Bob must still be
// able to write, run commands and start his servers. Needs a real small filesystem, so it runs
// only where the test may mount one (root with CAP_SYS_ADMIN; not in CI's container, where
// test/hub/tenants/disk-budget.test.ts covers the budget on the normal filesystem).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, startHub, tempDir, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const MIB = 1024 * 1024;

const mountPoint = process.getuid?.() === 0 ? tempDir("agentbox-small-fs-") : undefined;
const mounted = mountPoint !== undefined && spawnSync("mount", ["-t", "tmpfs", "-o", "size=300m", "tmpfs", mountPoint]).status === 0;
if (mountPoint && !mounted) fs.rmSync(mountPoint, { recursive: true, force: true });
const skip = mounted ? false : "needs a small filesystem of its own: root allowed to mount (CAP_SYS_ADMIN)";

const exec = async (client: Client, command: string) => {
  const result = await call(client, "terminal_exec", { command, timeoutMs: 60_000 });
  return { text: textOf(result), ok: !result.isError && /^Exit code 0\./.test(textOf(result)) };
};

describe("one tenant fills a small disk", { skip }, () => {
  let hub: TestHub;
  let alice: Client;
  let bob: Client;

  before(async () => {
    fs.mkdirSync(path.join(mountPoint!, "ws"));
    hub = await startHub({
      servers: ["terminal", "file"],
      workspace: path.join(mountPoint!, "ws"),
      env: { AGENTBOX_STATE_DIR: path.join(mountPoint!, "state") },
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
    });
    alice = await hub.connect({ headers: auth(KEY_A) });
    bob = await hub.connect({ headers: auth(KEY_B) });
  });
  after(async () => {
    await hub?.stop();
    if (mounted) spawnSync("umount", ["-l", mountPoint!]);
    fs.rmSync(mountPoint!, { recursive: true, force: true });
  });

  test("alice's budget is a share of the filesystem, and she cannot take it all", async () => {
    // as fast as she can: one file per command, each at the per-file limit, the soft limit lifted
    await exec(alice, "ulimit -S -f $(ulimit -H -f); for i in $(seq 1 60); do head -c 50000000 /dev/zero > f$i; done; dd if=/dev/zero of=big bs=1M");
    // the hub measures on its own schedule: wait until it has found her over her share
    const status = await until(
      "the hub to freeze alice's writes",
      async () => {
        const now = (await (await fetch(`${hub.origin}/`, { headers: auth(KEY_A) })).json()) as { disk?: { budgetBytes: number; frozen: boolean } };
        return now.disk?.frozen === true && now;
      },
      30_000,
    );
    const again = await exec(alice, "head -c 1048576 /dev/zero > more && echo wrote");
    assert.equal(again.ok, false, again.text);
    assert.equal(status.disk?.budgetBytes, Math.floor((0.9 * 300 * MIB) / 2));
    // once alice is frozen the hub makes room for the others on its own schedule (its reserve
    // released when the disk is nearly full, her preallocated blocks freed): bob writes once it has
    const room = () => {
      const fsStats = fs.statfsSync(mountPoint!);
      return fsStats.bavail * fsStats.bsize >= 8 * MIB;
    };
    await until("the hub to make room on the disk for the other tenants", room, 30_000);
  });

  test("bob still writes a file, runs a command that writes, and starts his servers", async () => {
    const written = await call(bob, "file_write", { path: "notes.bin", content: "y".repeat(2 * MIB) });
    assert.equal(written.isError, undefined, textOf(written));
    const shell = await exec(bob, "head -c 2097152 /dev/zero > two.bin && stat -c %s two.bin");
    assert.ok(shell.ok, shell.text);
    const terminal = async () =>
      ((await (await fetch(`${hub.origin}/`, { headers: auth(KEY_B) })).json()).servers as Array<{ name: string; pid: number | null; state: string }>).find(
        (s) => s.name === "terminal",
      )!;
    const first = (await terminal()).pid!;
    process.kill(first, "SIGKILL");
    // one reading of the status per check: state and pid from two readings could mix the old process and the new
    await until(
      "bob's terminal server to be back",
      async () => {
        const now = await terminal();
        return now.state === "ready" && now.pid !== null && now.pid !== first;
      },
      30_000,
    );
    const started = await exec(bob, "echo started > again.txt && cat again.txt");
    assert.ok(started.ok, started.text);
  });
});
