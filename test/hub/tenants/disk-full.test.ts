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
    await new Promise((r) => setTimeout(r, 3000)); // the hub's next measurements (not asserted on)
    const again = await exec(alice, "head -c 1048576 /dev/zero > more && echo wrote");
    assert.equal(again.ok, false, again.text);
    const status = await (await fetch(`${hub.origin}/`, { headers: auth(KEY_A) })).json();
    assert.equal(status.disk?.budgetBytes, Math.floor((0.9 * 300 * MIB) / 2));
    assert.equal(status.disk?.frozen, true);
  });

  test("bob still writes a file, runs a command that writes, and starts his servers", async () => {
    const written = await call(bob, "file_write", { path: "notes.bin", content: "y".repeat(2 * MIB) });
    assert.equal(written.isError, undefined, textOf(written));
    const shell = await exec(bob, "head -c 2097152 /dev/zero > two.bin && stat -c %s two.bin");
    assert.ok(shell.ok, shell.text);
    const terminal = async () =>
      ((await (await fetch(`${hub.origin}/`, { headers: auth(KEY_B) })).json()).servers as Array<{ name: string; pid: number | null; state: string }>).find((s) => s.name === "terminal")!;
    const first = (await terminal()).pid!;
    process.kill(first, "SIGKILL");
    const deadline = Date.now() + 30_000;
    while (!((await terminal()).state === "ready" && (await terminal()).pid !== first) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    const started = await exec(bob, "echo started > again.txt && cat again.txt");
    assert.ok(started.ok, started.text);
  });
});
