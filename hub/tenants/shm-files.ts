// POSIX shared memory and semaphores (shm_open, sem_open: Python's multiprocessing locks and queues,
// PyTorch's tensors between processes) are files in /dev/shm, a RAM file system all tenants share:
// Docker gives a container 64 MiB of it. One `dd` of a tenant's filled it, and every other tenant's
// `multiprocessing.Lock()` failed with ENOSPC, past the session and past the hub. So a tenant's
// files there go the way of its IPC objects (./ipc-objects.ts): all of them once it has no live
// session, before the hub listens and when it stops; while it has one, it keeps its share of the
// file system (limits.sharedMemoryMiB; by default the disk's rule: 90% of its size, shared
// equally), the oldest entries that fit, and the newer ones beyond are removed.
//
// What each tenant's uid holds is measured like its disk use (./disk-usage.ts: find in a child
// process, every file at least the file system's inode charge), and only while the file system holds
// anything at all: an empty /dev/shm, the common case, costs one statfs a sweep. The removal runs as
// the tenant (a tenant's folder there is its own to change under the hub's feet, and the sticky
// /dev/shm lets a uid remove only its own entries), so a link or a folder swapped in meanwhile
// reaches nothing of anyone else's; and while it runs, the tenant's processes are stopped, so none
// can undo its chmod or lower its limits (./tenant-pause.ts).
import fsp from "node:fs/promises";
import type NodeChildProcess from "node:child_process";
import type NodeFs from "node:fs";
import type NodePath from "node:path";
import { inodeCharge, measureUsage } from "./disk-usage.js";
import { runAsTenantScript, type TenantCommand } from "./tenant-script.js";
import { whileStopped } from "./tenant-pause.js";

export const SHM_DIR = "/dev/shm";
const WALK_TIMEOUT_MS = 30_000;
// removing a flood of files takes a while; what is left is taken by the next sweep
const REMOVE_TIMEOUT_MS = 60_000;

/** A tenant as the sweep sees it here. */
export interface ShmTenant {
  name: string;
  uid: number;
  /** What its files may hold while it has a live session. */
  shareBytes: number;
  /** Whether it has a live session: without one, all its files go. */
  live: boolean;
  asTenant: TenantCommand;
}

/** What was removed of one tenant's files, and why. */
export interface ShmRemoval {
  tenant: string;
  /** Whether it had a live session (and so kept its share). */
  live: boolean;
  /** Entries of `dir` removed (a folder with all it held is one). */
  entries: number;
  /** What its files there held before, by the walk. */
  heldBytes: number;
  /** What it may keep (0 without a live session). */
  shareBytes: number;
}

/**
 * Remove what tenants hold in `dir` beyond what they may keep: everything of those without a live
 * session, the newest beyond their share of the rest. Resolves with what went, per tenant.
 */
export async function sweepShmFiles(tenants: readonly ShmTenant[], dir = SHM_DIR): Promise<ShmRemoval[]> {
  if (tenants.length === 0) return [];
  const info = await fsp.statfs(dir).catch(() => undefined);
  // empty (its root folder is its one inode): nothing to measure
  if (!info || (info.bfree === info.blocks && info.files - info.ffree <= 1)) return [];
  const usage = await measureUsage([dir], [...new Set(tenants.map((t) => t.uid))], WALK_TIMEOUT_MS);
  const least = await inodeCharge(dir);
  const removals: ShmRemoval[] = [];
  for (const tenant of tenants) {
    const heldBytes = usage.bytes.get(tenant.uid) ?? 0;
    if (heldBytes === 0 || (tenant.live && heldBytes <= tenant.shareBytes)) continue;
    const shareBytes = tenant.live ? tenant.shareBytes : 0;
    const entries = await whileStopped(tenant.uid, () => removeAsTenant(tenant.asTenant, dir, shareBytes, least));
    if (entries > 0) removals.push({ tenant: tenant.name, live: tenant.live, entries, heldBytes, shareBytes });
  }
  return removals;
}

/**
 * Runs as the tenant (`node -e`), once it holds more than `keepBytes` in `dir`: keeps the oldest of its files there that
 * fit in `keepBytes` and removes the rest of its entries. Shared memory and semaphores are files at the top of `dir`, so
 * its folders, links and the like go first: a folder can hold more than a walk of it from here could count (nested past
 * any path's length), and rm(1) removes one however deep it goes.
 */
function tenantRemover(dir: string, keepBytes: number, leastBytes: number): void {
  // runs as `node -e` under the tenant's uid (./tenant-script.ts)
  const fs = process.getBuiltinModule("node:fs") as typeof NodeFs;
  const path = process.getBuiltinModule("node:path") as typeof NodePath;
  const { execFileSync } = process.getBuiltinModule("node:child_process") as typeof NodeChildProcess;
  const uid = process.getuid!();
  const files: { file: string; changed: number; bytes: number }[] = [];
  const doomed: string[] = [];
  const folders: string[] = [];
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name);
    try {
      const stat = fs.lstatSync(file);
      if (stat.uid !== uid) continue;
      if (stat.isFile()) files.push({ file, changed: stat.ctimeMs, bytes: Math.max(stat.blocks * 512, leastBytes) });
      else doomed.push(file);
      if (stat.isDirectory()) folders.push(file);
    } catch {
      // removed meanwhile
    }
  }
  files.sort((a, b) => a.changed - b.changed);
  let kept = 0;
  let full = false;
  for (const entry of files) {
    full ||= kept + entry.bytes > keepBytes;
    if (full) doomed.push(entry.file);
    else kept += entry.bytes;
  }
  const run = (command: string, options: string[], paths: string[]) => {
    for (let i = 0; i < paths.length; i += 100) {
      try {
        execFileSync(command, [...options, "--", ...paths.slice(i, i + 100)], { stdio: "ignore" });
      } catch {
        // what is left is counted below, and taken by the next sweep
      }
    }
  };
  // a folder it made unreadable (chmod 000, at any depth) is its own to open again: rm alone would stop there
  run("chmod", ["-R", "u+rwx"], folders);
  run("rm", ["-rf"], doomed);
  process.stdout.write(String(doomed.filter((file) => !fs.existsSync(file)).length));
}

async function removeAsTenant(asTenant: TenantCommand, dir: string, keepBytes: number, leastBytes: number): Promise<number> {
  const out = await runAsTenantScript(asTenant, tenantRemover, [dir, keepBytes, leastBytes], [], { maxChars: 32, timeoutMs: REMOVE_TIMEOUT_MS });
  // nothing (cut short: its time ran out): the next sweep tries again
  const entries = Number(out);
  return Number.isSafeInteger(entries) && out !== "" ? entries : 0;
}
