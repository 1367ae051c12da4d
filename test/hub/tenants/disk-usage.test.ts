// What hub/tenants/disk-usage.ts counts against a tenant's disk budget, on real files: tricks that make a
// file look small (sparse, hard links, empty files) count what they really take; other uids'
// files do not count; the budget's settings (default share, env, per tenant); the reserve; and
// what a file tool says when the budget has no room.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { assertDiskRoom, DISK_BUDGET_FILE_ENV, explainDiskError } from "../../../servers/lib/disk-budget.js";
import type { Logger } from "../../../servers/lib/log.js";
import { loadConfig, type HubConfig } from "../../../hub/config/config.js";
import { DiskReserve } from "../../../hub/tenants/disk-reserve.js";
import { inodeCharge, measureUsage, walkRoots } from "../../../hub/tenants/disk-usage.js";
import { fileSizeLimit, type Isolation } from "../../../hub/tenants/isolation.js";
import { buildTenants } from "../../../hub/tenants/tenants.js";

const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "disk-usage-")));
after(() => fs.rmSync(scratch, { recursive: true, force: true }));
const MIB = 1024 * 1024;
const me = process.getuid!();

const measure = async (dir: string) => (await measureUsage([dir], [me], 30_000)).bytes.get(me)!;

test("allocated blocks count, not apparent sizes: a sparse file counts what it holds", async () => {
  const dir = fs.mkdtempSync(path.join(scratch, "sparse-"));
  const base = await measure(dir);
  fs.writeFileSync(path.join(dir, "real"), Buffer.alloc(4 * MIB, 1));
  fs.closeSync(fs.openSync(path.join(dir, "sparse"), "w"));
  fs.truncateSync(path.join(dir, "sparse"), 1024 * MIB);
  const used = (await measure(dir)) - base;
  assert.ok(used >= 4 * MIB && used < 5 * MIB, `${used} bytes`);
});

test("blocks allocated past the end of a file (fallocate --keep-size) count", async () => {
  const dir = fs.mkdtempSync(path.join(scratch, "falloc-"));
  const base = await measure(dir);
  fs.writeFileSync(path.join(dir, "small"), "x");
  execFileSync("fallocate", ["--keep-size", "-l", String(8 * MIB), path.join(dir, "small")]);
  assert.equal(fs.statSync(path.join(dir, "small")).size, 1);
  const usage = await measureUsage([dir], [me], 30_000);
  assert.ok(usage.bytes.get(me)! - base >= 8 * MIB);
  // named, so the hub can free it: the one file with blocks past its end
  assert.deepEqual(usage.preallocated.get(me), [fs.statSync(path.join(dir, "small")).ino]);
});

test("what a uid holds is also told per filesystem, by the device number stat gives", async (t) => {
  const dir = fs.mkdtempSync(path.join(scratch, "devices-"));
  const shm = fs.mkdtempSync("/dev/shm/agentbox-devices-");
  t.after(() => fs.rmSync(shm, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, "here"), Buffer.alloc(2 * MIB, 1));
  fs.writeFileSync(path.join(shm, "there"), Buffer.alloc(MIB, 1));
  const usage = await measureUsage([dir, shm], [me], 30_000);
  const mine = usage.byDevice?.get(me);
  const [onDisk, inMemory] = [fs.statSync(dir).dev, fs.statSync(shm).dev];
  assert.notEqual(onDisk, inMemory);
  assert.ok(mine && mine.get(onDisk)! >= 2 * MIB && mine.get(inMemory)! >= MIB, JSON.stringify([...(mine ?? [])]));
  assert.equal(
    [...mine.values()].reduce((a, b) => a + b, 0),
    usage.bytes.get(me),
  );
});

test("a hard-linked file counts once, and every inode at least its filesystem's bytes per inode: empty files cannot take every inode", async () => {
  const dir = fs.mkdtempSync(path.join(scratch, "links-"));
  fs.writeFileSync(path.join(dir, "data"), Buffer.alloc(2 * MIB, 1));
  const one = await measure(dir);
  for (let i = 0; i < 20; i++) fs.linkSync(path.join(dir, "data"), path.join(dir, `link${i}`));
  assert.equal(await measure(dir), one, "links to one inode add nothing");
  for (let i = 0; i < 256; i++) fs.writeFileSync(path.join(dir, `empty${i}`), "");
  const after = await measure(dir);
  // a budget that is a share of the filesystem's bytes is then at most that share of its inodes
  const fsInfo = fs.statfsSync(dir);
  const perInode = Math.min(64 * 1024, Math.max(4096, (fsInfo.blocks * fsInfo.bsize) / fsInfo.files));
  assert.ok(after - one >= 256 * perInode, `${after - one} bytes for 256 empty files, on a filesystem of ${Math.round(perInode)} bytes per inode`);
  assert.equal(await inodeCharge(dir), Math.ceil(perInode / 512) * 512);
});

test("only the given uids' files count, each root once even when nested", async () => {
  const dir = fs.mkdtempSync(path.join(scratch, "owners-"));
  fs.mkdirSync(path.join(dir, "inner"));
  fs.writeFileSync(path.join(dir, "inner", "mine"), Buffer.alloc(MIB, 1));
  assert.deepEqual(walkRoots([dir, path.join(dir, "inner"), path.join(dir, "missing")]), [dir]);
  // a folder on a filesystem of its own is walked too: the walk never crosses into a mount
  if (fs.existsSync("/dev/shm") && fs.statSync("/dev/shm").dev !== fs.statSync("/dev").dev)
    assert.deepEqual(walkRoots(["/dev", "/dev/shm"]), ["/dev", "/dev/shm"]);
  const { bytes } = await measureUsage(walkRoots([dir, path.join(dir, "inner")]), [me, 54_321], 30_000);
  assert.ok(bytes.get(me)! >= MIB && bytes.get(me)! < 2 * MIB);
  assert.equal(bytes.get(54_321), 0);
});

test("a walk that takes longer than its time is cut short and says so: its figures are at least what is used", async () => {
  const dir = fs.mkdtempSync(path.join(scratch, "many-"));
  for (let d = 0; d < 20; d++) {
    fs.mkdirSync(path.join(dir, String(d)));
    for (let i = 0; i < 1000; i++) fs.closeSync(fs.openSync(path.join(dir, String(d), String(i)), "w"));
  }
  const whole = await measureUsage([dir], [me], 30_000);
  assert.equal(whole.partial, undefined, "a walk within its time is whole");
  const cut = await measureUsage([dir], [me], 1);
  assert.equal(cut.partial, true, "20,000 entries take longer than 1 ms");
  assert.ok(cut.bytes.get(me)! <= whole.bytes.get(me)!, `${cut.bytes.get(me)} counted before the cut, of ${whole.bytes.get(me)}`);
});

test("a walk that cannot run (timeout(1) missing) fails loudly instead of counting nothing", async (t) => {
  const bin = fs.mkdtempSync(path.join(scratch, "bin-"));
  for (const tool of ["sh", "find", "awk"]) fs.symlinkSync(execFileSync("sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).trim(), path.join(bin, tool));
  const saved = process.env.PATH;
  process.env.PATH = bin;
  t.after(() => (process.env.PATH = saved));
  await assert.rejects(measureUsage([scratch], [me], 30_000), /measuring disk use failed \(the walk exited 127/);
});

test("the budget: AGENTBOX_DISK_MIB for all, limits.diskMiB per tenant, else a share of the filesystem", () => {
  const workspace = path.join(scratch, "ws");
  const configPath = path.join(scratch, "agentbox.json");
  fs.writeFileSync(
    configPath,
    JSON.stringify({ tenants: { alice: { apiKey: "key-alice-0123456789" }, bob: { apiKey: "key-bob-0123456789", limits: { diskMiB: 64 } } } }),
  );
  const isolation: Isolation = { mode: "uid", summary: "test", canDropBoundingSet: false };
  const build = (env: NodeJS.ProcessEnv) => {
    const config: HubConfig = {
      ...loadConfig({ config: configPath }, { AGENTBOX_WORKSPACE: workspace, AGENTBOX_STATE_DIR: path.join(scratch, "state"), ...env }),
    };
    return Object.fromEntries(buildTenants(config, isolation).map((t) => [t.name, t.identity!.disk.budgetBytes]));
  };
  assert.deepEqual(build({ AGENTBOX_DISK_MIB: "20" }), { alice: 20 * MIB, bob: 64 * MIB });
  const { bsize, blocks } = fs.statfsSync(scratch);
  assert.equal(build({}).alice, Math.floor((0.9 * bsize * blocks) / 2));
  assert.throws(() => build({ AGENTBOX_DISK_MIB: "lots" }), /AGENTBOX_DISK_MIB/);
  fs.writeFileSync(configPath, JSON.stringify({ limits: { diskMiB: 0 } }));
  assert.throws(() => build({}), /diskMiB/);
});

test("processes start with the budget as their file size limit, none while frozen, hard 0 once locked", () => {
  assert.equal(fileSizeLimit({ budgetBytes: 20 * MIB, frozen: false, locked: false }), `${20 * MIB}:${20 * MIB}`);
  assert.equal(fileSizeLimit({ budgetBytes: 20 * MIB, frozen: true, locked: false }), `0:${20 * MIB}`);
  assert.equal(fileSizeLimit({ budgetBytes: 20 * MIB, frozen: true, locked: true }), "0:0");
});

test("the hub's disk reserve holds real blocks in a file no one can name, and gives them back", async () => {
  const dir = fs.mkdtempSync(path.join(scratch, "reserve-"));
  const logged: string[] = [];
  const log = { warn: (msg: string) => logged.push(msg) } as unknown as Logger;
  const reserve = new DiskReserve(dir, 16 * MIB, log);
  const held = () =>
    fs.readdirSync("/proc/self/fd").flatMap((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`).includes(".agentbox-reserve-") ? [fs.statSync(`/proc/self/fd/${fd}`).blocks * 512] : [];
      } catch {
        return [];
      }
    });
  assert.equal(await reserve.hold(), true, logged.join("\n"));
  assert.deepEqual(fs.readdirSync(dir), [], "unlinked: nothing to delete, nothing left if the hub dies");
  assert.ok(held()[0] >= 16 * MIB, `${held()} bytes held`);
  assert.equal(reserve.needs(64 * MIB), undefined);
  assert.equal(reserve.needs(MIB), "release", "nearly full: give the room to the tenants");
  reserve.release();
  assert.deepEqual(held(), []);
  assert.equal(reserve.needs(32 * MIB), undefined, "taken back only with room to spare");
  assert.equal(reserve.needs(64 * MIB), "hold");
});

test("a file tool refuses a write the budget has no room for, and says how much is used and what to do", async () => {
  const status = path.join(scratch, "disk.json");
  const saved = process.env[DISK_BUDGET_FILE_ENV];
  process.env[DISK_BUDGET_FILE_ENV] = status;
  try {
    await assertDiskRoom(100 * MIB); // not measured yet: the kernel's limit alone holds
    fs.writeFileSync(status, JSON.stringify({ usedBytes: 19 * MIB, budgetBytes: 20 * MIB }));
    await assertDiskRoom(MIB / 2);
    await assert.rejects(
      assertDiskRoom(2 * MIB),
      /Writing 2\.0 MiB would go over the disk budget: this tenant's files take 19\.0 of its 20\.0 MiB, 1\.0 MiB left\. Delete files/,
    );
    const efbig = Object.assign(new Error("EFBIG: file too large, write"), { code: "EFBIG" });
    assert.match(String(await explainDiskError(efbig, "big.bin")), /'big\.bin' was refused: it would grow past the disk budget, 20\.0 MiB/);
    fs.writeFileSync(status, JSON.stringify({ usedBytes: 21 * MIB, budgetBytes: 20 * MIB }));
    await assert.rejects(assertDiskRoom(0), /Disk budget used up: this tenant's files take 21\.0 of its 20\.0 MiB[^]*Delete files/);
    assert.match(String(await explainDiskError(efbig, "big.bin")), /Disk budget used up/);
    const other = new Error("EACCES");
    assert.equal(await explainDiskError(other, "x"), other);
  } finally {
    if (saved === undefined) delete process.env[DISK_BUDGET_FILE_ENV];
    else process.env[DISK_BUDGET_FILE_ENV] = saved;
  }
});
