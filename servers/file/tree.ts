// Whole folders copied and removed through open folder descriptors (see lib/safe-fs.ts): a
// subfolder swapped for a symlink halfway through is refused, never followed, so a recursive copy
// cannot pull files in from outside the workspace and a recursive delete cannot reach out of it.
import fsp from "node:fs/promises";
import { fdPath, lstatAt, openFileAt, openSubdir, withSubdir } from "../lib/safe-fs.js";
import { copyFileAt } from "../lib/atomic-write.js";
import type { OpenFile } from "../lib/open-file.js";

export interface CopyCounts {
  files: number;
  directories: number;
  symlinks: number;
  bytes: number;
  /** Entries not copied, with why: special files (sockets, FIFOs, devices) and hard links. */
  skipped: string[];
}

export const newCounts = (): CopyCounts => ({ files: 0, directories: 0, symlinks: 0, bytes: 0, skipped: [] });

/**
 * Copy src's entries into dst (both open folders), keeping modes and times; symlinks are copied as
 * links. `skip` names an entry of src itself to leave out (agentbox's own folder).
 */
export async function copyTreeAt(src: OpenFile, dst: OpenFile, counts: CopyCounts, skip?: string, relative = ""): Promise<void> {
  const names = (await fsp.readdir(fdPath(src))).sort();
  for (const name of names) {
    if (!relative && name === skip) continue;
    await copyEntryAt(src, name, dst, name, counts, relative ? `${relative}/${name}` : name);
  }
}

/**
 * Copy one entry of an open folder to a new name in another. Folders get their mode and times
 * after their content, so a read-only folder can still be filled and its mtime sticks. A
 * hard-linked file is skipped (it may be a file from outside), as are sockets, FIFOs and devices.
 */
export async function copyEntryAt(src: OpenFile, name: string, dst: OpenFile, dstName: string, counts: CopyCounts, rel: string): Promise<void> {
  const st = lstatAt(src, name);
  if (!st) return; // vanished meanwhile
  if (st.isSymbolicLink()) {
    await fsp.symlink(await fsp.readlink(fdPath(src, name)), fdPath(dst, dstName));
    await fsp.lutimes(fdPath(dst, dstName), st.atime, st.mtime).catch(() => undefined);
    counts.symlinks++;
  } else if (st.isDirectory()) {
    await withSubdir(src, name, (from) => copyDirAt(from, dst, dstName, counts, rel));
  } else if (st.isFile() && st.nlink > 1) {
    counts.skipped.push(`${rel} (hard link)`);
  } else if (st.isFile()) {
    const from = await openFileAt(src, name, rel);
    try {
      await copyFileAt(from, dst, dstName);
      counts.bytes += from.stat.size;
    } finally {
      await from.handle.close();
    }
    counts.files++;
  } else {
    counts.skipped.push(rel);
  }
}

/**
 * Copy an open folder to a new folder `dstName` in dst. Taking the source as an open folder (not
 * a name) means it cannot turn into a link to somewhere else halfway.
 */
export async function copyDirAt(from: OpenFile, dst: OpenFile, dstName: string, counts: CopyCounts, rel: string): Promise<void> {
  const st = await from.stat();
  await fsp.mkdir(fdPath(dst, dstName));
  await withSubdir(dst, dstName, async (to) => {
    await copyTreeAt(from, to, counts, undefined, rel);
    await to.chmod(st.mode & 0o7777);
    await to.utimes(st.atime, st.mtime);
  });
  counts.directories++;
}

/** rm -rf of `name` in an open folder, getting through read-only folders and never following a link. */
export async function removeAt(dir: OpenFile, name: string): Promise<void> {
  const st = lstatAt(dir, name);
  if (!st) return;
  if (!st.isDirectory()) return fsp.unlink(fdPath(dir, name));
  const sub = await openSubdir(dir, name, name);
  try {
    // a snapshot may have copied a read-only folder: its entries cannot go until it is writable
    if ((st.mode & 0o700) !== 0o700) await sub.chmod((st.mode & 0o7777) | 0o700);
    for (const child of await fsp.readdir(fdPath(sub))) await removeAt(sub, child);
  } finally {
    await sub.close();
  }
  await fsp.rmdir(fdPath(dir, name));
}
