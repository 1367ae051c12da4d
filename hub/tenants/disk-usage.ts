// What each tenant uid takes on disk, measured by find(1) and awk(1) in a child process: the walk
// stays off the hub's event loop and out of its memory, and only one line per uid comes back.
import { spawn } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";

/**
 * Folders any uid may write besides its own: a tenant's files there count too. Tenants' own
 * workspace, home and tmp are added by the caller.
 */
export const SHARED_WRITABLE_DIRS = ["/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/var/lock"];
const PREALLOCATED_SLACK = 1024 * 1024;
const AWK_GRACE_MS = 10_000;

// Each inode counts at least its filesystem's bytes per inode (its size over its inode count: 16 KiB
// on ext4's defaults), within these bounds: a budget that is a share of the filesystem's bytes is
// then as large a share of its inodes, so a tenant that makes empty files cannot take every inode.
const LEAST_INODE_BYTES = 4096;
const MOST_INODE_BYTES = 64 * 1024;

// Per uid, the blocks its files take (not their apparent size, so a sparse file counts what it
// really holds), each inode at least its filesystem's charge (so a flood of empty files or folders
// counts), a hard-linked inode once. Regular files holding over 1 MiB more than their size
// (preallocated past their end: fallocate --keep-size) are named too ("P uid inode"), so that space
// can be freed; and per uid and filesystem ("D uid device bytes"). `least` maps a device to its charge in 512-byte blocks.
const sumByUid = (least: Map<number, number>) => `BEGIN { ${[...least].map(([dev, blocks]) => `least["${dev}"] = ${blocks}`).join("; ")} }
NF == 6 {
  if ($4 > 1 && seen[$2]++) next
  split($2, id, ":"); m = (id[1] in least) ? least[id[1]] : ${LEAST_INODE_BYTES / 512}
  b = $3 < m ? m : $3; used[$1] += b; on[$1 " " id[1]] += b
  if ($6 == "f" && $3 * 512 > $5 + ${PREALLOCATED_SLACK}) print "P", $1, id[2]
}
$1 == "T" && $2 == 124 { print "PARTIAL" }
$1 == "T" && $2 > 124 { print "FAILED", $2 }
END { for (u in used) printf "%s %.0f\\n", u, used[u] * 512; for (k in on) printf "D %s %.0f\\n", k, on[k] * 512 }`;

/** The device number of the filesystem that holds `dir` (undefined: it cannot be reached). */
export const deviceOf = async (dir: string) => (await fsp.stat(dir).catch(() => undefined))?.dev;

/** What one inode counts at least on the filesystem that holds `dir`, in bytes (see LEAST_INODE_BYTES). */
export async function inodeCharge(dir: string): Promise<number> {
  const info = await fsp.statfs(dir).catch(() => undefined);
  const perInode = info && info.files > 0 ? (info.blocks * info.bsize) / info.files : 0;
  return Math.min(MOST_INODE_BYTES, Math.max(LEAST_INODE_BYTES, Math.ceil(perInode / 512) * 512));
}

export interface DiskUsage {
  /** Bytes per uid (0 for a uid that owns nothing there). */
  bytes: Map<number, number>;
  /** Per uid, inode numbers of its files with blocks preallocated past their end. */
  preallocated: Map<number, number[]>;
  /** Per uid, its bytes on each filesystem (by device number, as stat gives it). */
  byDevice?: Map<number, Map<number, number>>;
  /** The walk took longer than its time and was cut short: each uid uses at least its bytes, maybe more. */
  partial?: boolean;
}

/**
 * The roots to walk: those that exist, none inside another on the same filesystem (it would be
 * walked twice). One on a filesystem of its own stays: the walk does not cross into other mounts.
 */
export function walkRoots(candidates: string[]): string[] {
  const devices = new Map<string, number>();
  for (const dir of new Set(candidates.map((d) => path.resolve(d)))) {
    try {
      const st = fs.lstatSync(dir);
      if (st.isDirectory()) devices.set(dir, st.dev);
    } catch {
      // absent: nothing there to count
    }
  }
  const inside = (dir: string, root: string) => dir !== root && dir.startsWith(root === "/" ? "/" : `${root}/`);
  const existing = [...devices.keys()];
  return existing.filter((dir) => !existing.some((root) => inside(dir, root) && devices.get(root) === devices.get(dir))).sort();
}

/**
 * Bytes used per uid under the roots (each walked on its own filesystem only). A walk that takes
 * longer than `timeoutMs` is cut short and what it counted so far comes back marked `partial`: a
 * tenant whose files alone make walks that long must still be found over its budget.
 */
export async function measureUsage(roots: string[], uids: number[], timeoutMs: number): Promise<DiskUsage> {
  const usage: DiskUsage = { bytes: new Map(uids.map((uid) => [uid, 0])), preallocated: new Map(), byDevice: new Map() };
  if (roots.length === 0 || uids.length === 0) return usage;
  const least = new Map<number, number>();
  for (const root of roots) {
    const dev = await deviceOf(root);
    if (dev !== undefined && !least.has(dev)) least.set(dev, (await inodeCharge(root)) / 512);
  }
  return new Promise((resolve, reject) => {
    const owners = uids.flatMap((uid, i) => [...(i ? ["-o"] : []), "-uid", String(uid)]);
    // roots are absolute paths, so find never takes one for an expression; timeout(1) ends find alone,
    // so awk still sums what it was given, and says so (timeout exits 124) on a line of its own (find
    // may have been stopped in the middle of one)
    const walk = `timeout ${timeoutMs / 1000} find "$@" -printf '%U %D:%i %b %n %s %y\\n' 2>/dev/null; printf '\\nT %s\\n' $?`;
    const script = `{ ${walk}; } | awk '${sumByUid(least)}'`;
    const child = spawn("sh", ["-c", script, "sh", ...roots, "-xdev", "(", ...owners, ")"], { stdio: ["ignore", "pipe", "ignore"], detached: true });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
    // a backstop: awk sums as fast as find prints, so it ends soon after find
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // ended meanwhile
      }
    }, timeoutMs + AWK_GRACE_MS);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (signal) return reject(new Error(`measuring disk use stopped by ${signal} (its sum took ${AWK_GRACE_MS} ms past the walk's ${timeoutMs} ms)`));
      if (code !== 0) return reject(new Error(`measuring disk use failed (awk exited ${code})`));
      const lines = out.split("\n");
      // 125-127: timeout(1) or find could not run at all (not installed, say): nothing was counted
      const failed = lines.find((line) => line.startsWith("FAILED "));
      if (failed) return reject(new Error(`measuring disk use failed (the walk exited ${failed.slice(7)}: are find and timeout installed?)`));
      for (const line of lines) {
        const fields = line.split(" ");
        if (fields[0] === "PARTIAL") usage.partial = true;
        else if (fields[0] === "P") {
          const [uid, inode] = fields.slice(1).map(Number);
          usage.preallocated.set(uid, [...(usage.preallocated.get(uid) ?? []), inode]);
        } else if (fields[0] === "D") {
          const [uid, device, bytes] = fields.slice(1).map(Number);
          if (!usage.bytes.has(uid) || !Number.isFinite(device) || !Number.isFinite(bytes)) continue;
          if (!usage.byDevice!.has(uid)) usage.byDevice!.set(uid, new Map());
          usage.byDevice!.get(uid)!.set(device, bytes);
        } else if (usage.bytes.has(Number(fields[0])) && Number.isFinite(Number(fields[1]))) {
          usage.bytes.set(Number(fields[0]), Number(fields[1]));
        }
      }
      resolve(usage);
    });
  });
}

/** What an unprivileged user may still make on a filesystem: bytes, and files (inodes). */
export interface Free {
  bytes: number;
  inodes: number;
}

/** What is free on the filesystem that holds `dir` (undefined: it cannot be read). */
export async function freeOn(dir: string): Promise<Free | undefined> {
  const info = await fsp.statfs(dir).catch(() => undefined);
  return info && { bytes: info.bavail * info.bsize, inodes: info.ffree };
}

/** The bytes an unprivileged user may still write on the filesystem that holds `dir`. */
export async function freeBytes(dir: string): Promise<number | undefined> {
  return (await freeOn(dir))?.bytes;
}

/** What is free on each filesystem the roots are on, keyed by one root on it. */
export async function freeSpaceByFilesystem(roots: string[], probe = freeOn): Promise<Map<string, Free>> {
  const byDevice = new Map<number, string>();
  for (const root of roots) {
    const dev = await deviceOf(root);
    if (dev !== undefined && !byDevice.has(dev)) byDevice.set(dev, root);
  }
  const free = new Map<string, Free>();
  for (const root of byDevice.values()) {
    const now = await probe(root);
    if (now) free.set(root, now);
  }
  return free;
}
