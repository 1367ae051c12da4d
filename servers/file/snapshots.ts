// Workspace snapshots: a full copy of the workspace (content, empty folders, modes, symlinks,
// times) under <workspace>/.agentbox/snapshots/<name>/, restorable exactly.
import crypto from "node:crypto";
import fsp from "node:fs/promises";
import path from "node:path";
import { fdPath, lstatAt, openFileAt, withDir, withSubdir } from "../lib/safe-fs.js";
import { atomicWriteAt } from "../lib/atomic-write.js";
import { ToolError } from "../lib/tool.js";
import { toolName } from "../lib/names.js";
import { RESERVED_DIR, reservedRoot } from "./paths.js";
import { copyTreeAt, newCounts, removeAt } from "./tree.js";
import type { OpenFile } from "../lib/open-file.js";

export const SNAPSHOT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$/;

export interface SnapshotMeta {
  name: string;
  createdAt: string;
  files: number;
  directories: number;
  symlinks: number;
  bytes: number;
  /** Not copied: sockets, FIFOs, devices, and hard-linked files (they may be files from outside). */
  skipped: string[];
  rootMode: number;
}

const snapshotsDir = (workspace: string) => path.join(reservedRoot(workspace), "snapshots");
const tempName = (kind: string) => `.${kind}-${crypto.randomBytes(6).toString("hex")}`;

// One snapshot operation at a time: a restore racing a take would copy a half-swapped workspace.
let queue: Promise<unknown> = Promise.resolve();
export function serialized<T>(fn: () => Promise<T>): Promise<T> {
  const run = queue.then(fn, fn);
  queue = run.catch(() => undefined);
  return run;
}

// Everything below works through folders opened from the workspace root without following links:
// an agent's command can plant links anywhere, .agentbox included, and a snapshot must neither copy
// files in from outside nor write or delete outside while restoring.
const withSnapshots = <T>(workspace: string, fn: (snapshots: OpenFile) => Promise<T>) => withDir(workspace, snapshotsDir(workspace), { create: true }, fn);

export function validateName(name: string): void {
  if (!SNAPSHOT_NAME.test(name) || name.length > 64) {
    throw new ToolError(`Invalid snapshot name '${name}': use 1-64 letters, digits, '-', '_' and single dots between them (e.g. 'before-refactor').`);
  }
}

async function readMeta(snapshots: OpenFile, name: string): Promise<SnapshotMeta | null> {
  try {
    return await withSubdir(snapshots, name, async (dir) => {
      const meta = await openFileAt(dir, "meta.json", "meta.json");
      try {
        return JSON.parse(await meta.handle.readFile("utf8")) as SnapshotMeta;
      } finally {
        await meta.handle.close();
      }
    });
  } catch {
    return null;
  }
}

export async function takeSnapshot(workspace: string, name: string, overwrite: boolean): Promise<SnapshotMeta> {
  validateName(name);
  return withSnapshots(workspace, async (snapshots) => {
    const exists = Boolean(lstatAt(snapshots, name));
    if (exists && !overwrite) throw new ToolError(`Snapshot '${name}' already exists; pass overwrite: true to replace it, or pick another name.`);
    // build it under a temp name and rename: a failed take never leaves a half snapshot behind
    const temp = tempName("take");
    const counts = newCounts();
    try {
      await fsp.mkdir(fdPath(snapshots, temp));
      const meta = await withSubdir(snapshots, temp, async (dir) => {
        await fsp.mkdir(fdPath(dir, "files"));
        const rootMode = await withDir(workspace, workspace, {}, async (root) => {
          await withSubdir(dir, "files", (files) => copyTreeAt(root, files, counts, RESERVED_DIR));
          return (await root.stat()).mode & 0o7777;
        });
        const meta: SnapshotMeta = { name, createdAt: new Date().toISOString(), ...counts, rootMode };
        await atomicWriteAt(dir, "meta.json", Buffer.from(JSON.stringify(meta, null, 2)));
        return meta;
      });
      if (exists) await removeAt(snapshots, name);
      await fsp.rename(fdPath(snapshots, temp), fdPath(snapshots, name));
      return meta;
    } catch (err) {
      await removeAt(snapshots, temp);
      throw err;
    }
  });
}

export async function listSnapshots(workspace: string): Promise<SnapshotMeta[]> {
  return withSnapshots(workspace, async (snapshots) => {
    const names = (await fsp.readdir(fdPath(snapshots))).filter((n) => !n.startsWith("."));
    const metas = await Promise.all(names.map((n) => readMeta(snapshots, n)));
    return metas.filter((m): m is SnapshotMeta => m !== null).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  });
}

async function requireSnapshot(workspace: string, name: string): Promise<SnapshotMeta> {
  validateName(name);
  const meta = await withSnapshots(workspace, (snapshots) => readMeta(snapshots, name));
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
  const staging = tempName("restore");
  const trash = tempName("trash");
  await withDir(workspace, reservedRoot(workspace), { create: true }, async (reserved) => {
    await fsp.mkdir(fdPath(reserved, staging));
    try {
      await withSubdir(reserved, staging, (stage) =>
        withDir(workspace, path.join(snapshotsDir(workspace), name, "files"), {}, (files) => copyTreeAt(files, stage, newCounts())),
      );
      await fsp.mkdir(fdPath(reserved, trash));
      await withDir(workspace, workspace, {}, async (root) => {
        await withSubdir(reserved, staging, (stage) => withSubdir(reserved, trash, (bin) => swapIn(root, stage, bin)));
        await root.chmod(meta.rootMode);
      });
      await removeAt(reserved, trash);
    } finally {
      await removeAt(reserved, staging);
    }
  });
  return meta;
}

/** Move the workspace's entries into bin and the staged ones into the workspace; undo on failure. */
async function swapIn(root: OpenFile, stage: OpenFile, bin: OpenFile): Promise<void> {
  const current = (await fsp.readdir(fdPath(root))).filter((n) => n !== RESERVED_DIR);
  const movedOut: string[] = [];
  const movedIn: string[] = [];
  try {
    for (const n of current) {
      await moveEntry(fdPath(root, n), fdPath(bin, n));
      movedOut.push(n);
    }
    for (const n of await fsp.readdir(fdPath(stage))) {
      await moveEntry(fdPath(stage, n), fdPath(root, n));
      movedIn.push(n);
    }
  } catch (err) {
    // put the workspace back as it was before the restore started
    for (const n of movedIn) await removeAt(root, n);
    for (const n of movedOut) await moveEntry(fdPath(bin, n), fdPath(root, n)).catch(() => undefined);
    throw err;
  }
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
  await withSnapshots(workspace, (snapshots) => removeAt(snapshots, name));
  return meta;
}
