// A tenant's share of each filesystem it writes other than the workspace's (hub/tenants/filesystem-shares.ts):
// its budget is a share of the workspace's filesystem, and a smaller one (a tmpfs /tmp holding the
// tenants' homes, /run/lock) could be filled by one tenant within that budget. Over its share of
// one, the tenant is frozen like a tenant over its budget, and told where to delete.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { createLogger } from "../../../servers/lib/log.js";
import { assertDiskRoom, DISK_BUDGET_FILE_ENV, readDiskUse } from "../../../servers/lib/disk-budget.js";
import { DiskBudgets, type BudgetedTenant } from "../../../hub/tenants/disk-budget.js";
import { sharesOf } from "../../../hub/tenants/filesystem-shares.js";
import { call, startHub, tempDir, textOf } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";

const MIB = 1024 * 1024;
const BUDGET = 64 * MIB;

const tenantAt = (workspace: string, home: string): BudgetedTenant => ({
  name: "alice",
  identity: {
    uid: 54_322,
    gid: 54_322,
    processes: 64,
    memoryBytes: 64 * MIB,
    // two tenants' worth: 45% of each filesystem
    disk: { budgetBytes: BUDGET, filesystemShare: 0.45, frozen: false, locked: false },
    sharedMemoryBytes: MIB,
  },
  workspace,
  home,
  tmp: workspace,
  diskStatus: path.join(workspace, "disk.json"),
  children: [],
});

test("the share of each other filesystem is its size times the tenant's fraction, never more than the budget; the least room left is watched", async () => {
  const tenant = tenantAt(os.tmpdir(), os.tmpdir());
  const others = [
    { device: 1, sizeBytes: 40 * MIB },
    { device: 2, sizeBytes: 1024 * MIB },
  ];
  // 18 MiB of the small one (45% of 40), the budget (64 MiB, under 45% of 1 GiB) of the large one
  assert.deepEqual(
    await sharesOf(
      tenant,
      new Map([
        [1, 10 * MIB],
        [2, 50 * MIB],
      ]),
      others,
    ),
    { roomBytes: 8 * MIB },
  );
  const small = await sharesOf(tenant, new Map([[1, 18 * MIB]]), others);
  assert.deepEqual(small.full && { usedBytes: small.full.usedBytes, shareBytes: small.full.shareBytes }, {
    usedBytes: 18 * MIB,
    shareBytes: Math.floor(0.45 * 40 * MIB),
  });
  const large = await sharesOf(tenant, new Map([[2, BUDGET]]), others);
  assert.equal(large.full?.shareBytes, BUDGET);
  // no fraction (a test's or an older limit): only the budget
  const unlimited = { ...tenant, identity: { ...tenant.identity!, disk: { budgetBytes: BUDGET, frozen: false, locked: false } } };
  assert.deepEqual(await sharesOf(unlimited, new Map([[1, 40 * MIB]]), others), { roomBytes: Infinity });
});

test("a tenant over its share of a smaller filesystem is frozen and told where to delete; under it again, it writes", async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "fs-shares-"));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  // its home on another filesystem than its workspace: /dev, in a container and on a host alike
  const home = "/dev";
  const homeDevice = fs.statSync(home).dev;
  assert.notEqual(homeDevice, fs.statSync(root).dev);
  const tenant = tenantAt(root, home);
  let onHome = 0;
  const logged: string[] = [];
  const budgets = new DiskBudgets(
    [tenant],
    createLogger({}, { write: (line) => void logged.push(line) }),
    // a frozen tenant's processes are lowered through this: there are none under its uid
    () => ({ command: "true", args: [] }),
    {
      walk: async (_roots, uids) => ({
        bytes: new Map(uids.map((uid) => [uid, onHome + MIB])),
        byDevice: new Map(uids.map((uid) => [uid, new Map([[homeDevice, onHome]])])),
        preallocated: new Map(),
      }),
      freeOn: async () => ({ bytes: 10_000 * MIB, inodes: 1_000_000 }),
      // the home's filesystem is 40 MiB (alice may hold 18 MiB of it), every other one large
      sizeOn: async (dir) => (fs.statSync(dir).dev === homeDevice ? 40 * MIB : 100_000 * MIB),
    },
  );
  t.after(() => budgets.stop());
  const previous = process.env[DISK_BUDGET_FILE_ENV];
  process.env[DISK_BUDGET_FILE_ENV] = tenant.diskStatus;
  t.after(() => (previous === undefined ? delete process.env[DISK_BUDGET_FILE_ENV] : (process.env[DISK_BUDGET_FILE_ENV] = previous)));

  onHome = 20 * MIB; // 21 MiB in all: far under the 64 MiB budget
  await budgets.measureNow();
  assert.equal(tenant.identity!.disk.frozen, true);
  const use = await readDiskUse();
  assert.deepEqual(use?.full, { folders: [home], usedBytes: 20 * MIB, shareBytes: Math.floor(0.45 * 40 * MIB) });
  await assert.rejects(
    assertDiskRoom(1),
    /Disk share used up: this tenant's files in \/dev take 20\.0 of the 18\.0 MiB it may hold on that filesystem[^]*Delete files you no longer need in \/dev/,
  );
  assert.ok(
    logged.some((l) => l.includes("tenant's share of the filesystem holding /dev used up") && l.includes('"shareThereMiB":18')),
    logged.join(""),
  );

  onHome = 5 * MIB;
  await budgets.measureNow();
  assert.equal(tenant.identity!.disk.frozen, false);
  assert.equal((await readDiskUse())?.full, undefined);
  await assertDiskRoom(MIB);
});

// A real small filesystem: a 32 MiB tmpfs holding the tenants' homes (the read-only deploy's --tmpfs
// /tmp does). Mounting one needs CAP_SYS_ADMIN, which a container does not have: there the test above,
// with the filesystem's size a stand-in, is what runs.
function smallFilesystem(): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const dir = tempDir("agentbox-small-fs-");
  if (spawnSync("mount", ["-t", "tmpfs", "-o", "size=32m,mode=755", "tmpfs", dir]).status !== 0) return void fs.rmSync(dir, { recursive: true });
  return dir;
}
const small = smallFilesystem();

test(
  "alice writing her home full on a small filesystem is stopped at her share of it, and bob can still write his",
  { skip: small ? false : "needs root and a tmpfs mount (CAP_SYS_ADMIN)" },
  async (t) => {
    t.after(() => {
      spawnSync("umount", ["-l", small!]);
      fs.rmSync(small!, { recursive: true, force: true });
    });
    const [keyA, keyB] = [`alice-${randomBytes(16).toString("hex")}`, `bob-${randomBytes(16).toString("hex")}`];
    const hub = await startHub({
      servers: ["terminal", "file"],
      env: { AGENTBOX_STATE_DIR: small! },
      config: { tenants: { alice: { apiKey: keyA }, bob: { apiKey: keyB } } },
    });
    t.after(() => hub.stop());
    const alice = await hub.connect({ headers: { Authorization: `Bearer ${keyA}` } });
    const bob = await hub.connect({ headers: { Authorization: `Bearer ${keyB}` } });
    const exec = async (client: Client, command: string) => textOf(await call(client, "terminal_exec", { command, timeoutMs: 60_000 }));

    // 1 MiB at a time, 30 times: her budget (90% of the workspace's filesystem over two) would allow all of it
    const filled = await exec(alice, "for i in $(seq 30); do head -c 1048576 /dev/zero > ~/f$i || break; sleep 0.2; done; echo written $(ls ~ | wc -l)");
    const written = Number(/written (\d+)/.exec(filled)?.[1]);
    assert.ok(written < 30, `stopped before filling the filesystem: ${filled}`);
    const refused = await call(alice, "file_write", { path: "note.txt", content: "x" });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /Disk share used up: this tenant's files in .+ take [\d.]+ of the 14\.4 MiB it may hold on that filesystem/);

    const his = await exec(bob, "head -c 8388608 /dev/zero > ~/eight && stat -c %s ~/eight");
    assert.match(his, /--- stdout ---\n8388608\n/, "bob's 8 MiB fit beside what alice holds");

    // she deletes in her home, and writes again once measured
    await exec(alice, "rm -f ~/f*");
    await until("alice's file_write to work again", async () => !(await call(alice, "file_write", { path: "note.txt", content: "x" })).isError, 60_000, 250);
  },
);
