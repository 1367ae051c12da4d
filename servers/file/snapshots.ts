// Workspace snapshots: a full copy of the workspace (content, empty folders, modes, symlinks,
// times) under <workspace>/.agentbox/snapshots/<name>/, restorable exactly.
import crypto from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { ToolError } from "../lib/tool.js";
import { toolName } from "../lib/names.js";
import { RESERVED_DIR, reservedRoot } from "./paths.js";

export const SNAPSHOT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$/;

export interface SnapshotMeta {
  name: string;
  createdAt: string;
  files: number;
  directories: number;
  symlinks: number;
  bytes: number;
  /** Sockets, FIFOs and devices are not copied. */
  skipped: string[];
  rootMode: number;
}

interface Counts {
  files: number;
  directories: number;
  symlinks: number;
  bytes: number;
  skipped: string[];
}

const snapshotsDir = (workspace: string) => path.join(reservedRoot(workspace), "snapshots");
const snapshotDir = (workspace: string, name: string) => path.join(snapshotsDir(workspace), name);
const tempName = (kind: string) => `.${kind}-${crypto.randomBytes(6).toString("hex")}`;

// One snapshot operation at a time: a restore racing a take would copy a half-swapped workspace.
let queue: Promise<unknown> = Promise.resolve();
export function serialized<T>(fn: () => Promise<T>): Promise<T> {
  const run = queue.then(fn, fn);
  queue = run.catch(() => undefined);
  return run;
}

/**
 * Copy src's entries into dst (which exists), keeping modes and times. Folders get their mode
 * and times after their content, so a read-only folder can still be filled and its mtime sticks.
 */
async function copyTree(src: string, dst: string, counts: Counts, skip?: string, relative = ""): Promise<void> {
  const entries = await fsp.readdir(src, { withFileTypes: true });
  for (const e of entries) {
    const from = path.join(src, e.name);
    const to = path.join(dst, e.name);
    const rel = relative ? `${relative}/${e.name}` : e.name;
    if (from === skip) continue;
    const st = await fsp.lstat(from);
    if (st.isSymbolicLink()) {
      await fsp.symlink(await fsp.readlink(from), to);
      await fsp.lutimes(to, st.atime, st.mtime).catch(() => undefined);
      counts.symlinks++;
    } else if (st.isDirectory()) {
      await fsp.mkdir(to);
      await copyTree(from, to, counts, skip, rel);
      await fsp.chmod(to, st.mode & 0o7777);
      await fsp.utimes(to, st.atime, st.mtime);
      counts.directories++;
    } else if (st.isFile()) {
      await fsp.copyFile(from, to, fs.constants.COPYFILE_FICLONE);
      await fsp.chmod(to, st.mode & 0o7777);
      await fsp.utimes(to, st.atime, st.mtime);
      counts.files++;
      counts.bytes += st.size;
    } else {
      counts.skipped.push(rel);
    }
  }
}

/** rm -rf that also gets through folders a snapshot copied as read-only. */
async function removeTree(target: string): Promise<void> {
  try {
    await fsp.rm(target, { recursive: true, force: true });
  } catch {
    await makeWritable(target);
    await fsp.rm(target, { recursive: true, force: true });
  }
}

// a failed recursive rm may still be deleting other branches: what vanishes meanwhile is fine
async function makeWritable(dir: string): Promise<void> {
  const st = await fsp.lstat(dir).catch(() => null);
  if (!st?.isDirectory()) return;
  await fsp.chmod(dir, (st.mode & 0o7777) | 0o700).catch(() => undefined);
  for (const e of await fsp.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (e.isDirectory()) await makeWritable(path.join(dir, e.name));
  }
}

export function validateName(name: string): void {
  if (!SNAPSHOT_NAME.test(name) || name.length > 64) {
    throw new ToolError(`Invalid snapshot name '${name}': use 1-64 letters, digits, '-', '_' and single dots between them (e.g. 'before-refactor').`);
  }
}

async function readMeta(workspace: string, name: string): Promise<SnapshotMeta | null> {
  try {
    return JSON.parse(await fsp.readFile(path.join(snapshotDir(workspace, name), "meta.json"), "utf8")) as SnapshotMeta;
  } catch {
    return null;
  }
}

export async function takeSnapshot(workspace: string, name: string, overwrite: boolean): Promise<SnapshotMeta> {
  validateName(name);
  const final = snapshotDir(workspace, name);
  if (fs.existsSync(final) && !overwrite) throw new ToolError(`Snapshot '${name}' already exists; pass overwrite: true to replace it, or pick another name.`);
  await fsp.mkdir(snapshotsDir(workspace), { recursive: true });
  // build it under a temp name and rename: a failed take never leaves a half snapshot behind
  const temp = path.join(snapshotsDir(workspace), tempName("take"));
  const counts: Counts = { files: 0, directories: 0, symlinks: 0, bytes: 0, skipped: [] };
  try {
    await fsp.mkdir(path.join(temp, "files"), { recursive: true });
    await copyTree(workspace, path.join(temp, "files"), counts, reservedRoot(workspace));
    const rootMode = (await fsp.stat(workspace)).mode & 0o7777;
    const meta: SnapshotMeta = { name, createdAt: new Date().toISOString(), ...counts, rootMode };
    await fsp.writeFile(path.join(temp, "meta.json"), JSON.stringify(meta, null, 2));
    if (fs.existsSync(final)) await removeTree(final);
    await fsp.rename(temp, final);
    return meta;
  } catch (err) {
    await removeTree(temp);
    throw err;
  }
}

export async function listSnapshots(workspace: string): Promise<SnapshotMeta[]> {
  const names = await fsp.readdir(snapshotsDir(workspace)).catch(() => [] as string[]);
  const metas = await Promise.all(names.filter((n) => !n.startsWith(".")).map((n) => readMeta(workspace, n)));
  return metas.filter((m): m is SnapshotMeta => m !== null).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

async function requireSnapshot(workspace: string, name: string): Promise<SnapshotMeta> {
  validateName(name);
  const meta = await readMeta(workspace, name);
  if (!meta) {
    const known = (await listSnapshots(workspace)).map((m) => m.name);
    throw new ToolError(`No snapshot named '${name}'. Existing: ${known.length ? known.join(", ") : `none (take one with ${toolName("snapshot_take")})`}.`);
  }
  return meta;
}

/**
 * Bring the workspace back to the snapshot exactly. The snapshot is first copied to a staging
 * folder; only then are the current entries moved aside and the staged ones moved in (renames on
 * one filesystem), so a failed copy leaves the workspace untouched.
 */
export async function restoreSnapshot(workspace: string, name: string): Promise<SnapshotMeta> {
  const meta = await requireSnapshot(workspace, name);
  const reserved = reservedRoot(workspace);
  const staging = path.join(reserved, tempName("restore"));
  const trash = path.join(reserved, tempName("trash"));
  await fsp.mkdir(staging);
  try {
    await copyTree(path.join(snapshotDir(workspace, name), "files"), staging, { files: 0, directories: 0, symlinks: 0, bytes: 0, skipped: [] });
    await fsp.mkdir(trash);
    const current = (await fsp.readdir(workspace)).filter((n) => n !== RESERVED_DIR);
    const movedOut: string[] = [];
    const movedIn: string[] = [];
    try {
      for (const n of current) {
        await moveEntry(path.join(workspace, n), path.join(trash, n));
        movedOut.push(n);
      }
      for (const n of await fsp.readdir(staging)) {
        await moveEntry(path.join(staging, n), path.join(workspace, n));
        movedIn.push(n);
      }
    } catch (err) {
      // put the workspace back as it was before the restore started
      for (const n of movedIn) await removeTree(path.join(workspace, n));
      for (const n of movedOut) await fsp.rename(path.join(trash, n), path.join(workspace, n)).catch(() => undefined);
      throw err;
    }
    await fsp.chmod(workspace, meta.rootMode);
    await removeTree(trash);
  } finally {
    await removeTree(staging);
  }
  return meta;
}

/**
 * Rename across folders. A folder moving to another parent must be writable itself (its ".."
 * changes) unless the caller is root, so a read-only folder is opened for the move and closed again.
 */
async function moveEntry(from: string, to: string): Promise<void> {
  const st = await fsp.lstat(from);
  const readOnlyDir = st.isDirectory() && (st.mode & 0o200) === 0;
  if (readOnlyDir) await fsp.chmod(from, (st.mode & 0o7777) | 0o200);
  await fsp.rename(from, to);
  if (readOnlyDir) await fsp.chmod(to, st.mode & 0o7777);
}

export async function deleteSnapshot(workspace: string, name: string): Promise<SnapshotMeta> {
  const meta = await requireSnapshot(workspace, name);
  await removeTree(snapshotDir(workspace, name));
  return meta;
}
