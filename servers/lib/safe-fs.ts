// Using a workspace path without a window between the check and the use. The path guard
// (workspace.ts) answers "is this name inside?", but an agent running commands can swap a checked
// name for a symlink before we open it. So every read opens first and then asks the kernel where
// the open file really is (/proc/self/fd/<fd>); every write walks from the workspace root one
// folder at a time through open descriptors, never following a link, and names files relative to
// the folder it holds open. Linux only, like the rest of agentbox (/proc must be mounted).
import fs from "node:fs";
import path from "node:path";
import { ToolError } from "./tool.js";
import { isInside } from "./workspace.js";
import { OpenFile } from "./open-file.js";

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = fs.constants;

/** A name that reaches what `fd` refers to (and `name` inside it, when `fd` is a folder): openat() for Node. */
export function fdPath(fd: number | { readonly fd: number }, name?: string): string {
  const n = typeof fd === "number" ? fd : fd.fd;
  if (name !== undefined && (name === "" || name === "." || name === ".." || name.includes("/"))) {
    throw new ToolError(`'${name}' is not a single file name.`);
  }
  return name === undefined ? `/proc/self/fd/${n}` : `/proc/self/fd/${n}/${name}`;
}

export const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** The kernel's own answer to where an open descriptor is; it must be inside root. */
export function assertOpenedInside(root: string, file: { readonly fd: number }, shown: string): string {
  let where: string;
  try {
    where = fs.readlinkSync(fdPath(file));
  } catch {
    throw new ToolError(`Cannot check where '${shown}' is (is /proc mounted?); refusing to use it.`);
  }
  // a file deleted since it was opened reads "<path> (deleted)", still a path under its folder
  if (!path.isAbsolute(where) || !isInside(root, where)) {
    throw new ToolError(`'${shown}' was switched to something outside the workspace while being opened; refusing it.`);
  }
  return where;
}

/**
 * A regular file with more than one name may be someone else's file linked into the workspace
 * (`ln /etc/shadow x`). Linux's fs.protected_hardlinks=1 already stops a uid from linking files
 * it may not write, but the hub can run every tenant under one uid, so the check stays. Folders
 * are exempt: their link count counts their subfolders.
 */
export function refuseHardLinked(st: fs.Stats, shown: string): void {
  if (st.isFile() && st.nlink > 1) {
    throw new ToolError(
      `'${shown}' is a hard link (one file with ${st.nlink} names), which could be a file from outside the workspace; ` +
        `refusing to read it. If it is your own file, copy it into a normal file with a command (e.g. cp '${shown}' copy-of-it) and use the copy.`,
    );
  }
}

export interface OpenedFile {
  /** Opened for reading, by direct system calls (./open-file.ts). */
  handle: OpenFile;
  stat: fs.Stats;
  /** The path it was opened by (for names, extensions and messages). */
  real: string;
  /** Where the kernel says the opened file is (what confinement checks use). */
  where: string;
}

function openError(err: unknown, shown: string): never {
  if (code(err) === "ENOENT") throw new ToolError(`No such file or directory: ${shown}`);
  if (code(err) === "ELOOP") throw new ToolError(`'${shown}' was replaced by a symlink while being opened; refusing to follow it.`);
  if (code(err) === "ENOTDIR") throw new ToolError(`A folder in '${shown}' is not a folder (or was just replaced by something else).`);
  // what opening a Unix socket for reading answers
  if (code(err) === "ENXIO") throw new ToolError(`'${shown}' is a socket (or a device with nothing behind it), not a regular file: it has no content to read.`);
  throw err;
}

/**
 * Open `real` (a path the guard resolved inside root) for reading and return the open file once
 * it is proven to be inside root and not hard-linked. The final component must not be a link
 * (the guard resolved links already, so one now was put there since); a folder on the way that
 * became a link is caught by asking where the descriptor is. O_NONBLOCK: a FIFO never hangs us.
 */
export async function openVerified(root: string, real: string, shown: string): Promise<OpenedFile> {
  const handle = openForReading(real, shown);
  try {
    const where = assertOpenedInside(root, handle, shown);
    const stat = handle.statNow();
    refuseHardLinked(stat, shown);
    return { handle, stat, real, where };
  } catch (err) {
    handle.closeNow();
    throw err;
  }
}

/** Open the entry `name` in an open folder for reading, never following a link; hard links refused. */
export async function openFileAt(dir: { readonly fd: number }, name: string, shown: string): Promise<OpenedFile> {
  const handle = openForReading(fdPath(dir, name), shown);
  try {
    const stat = handle.statNow();
    refuseHardLinked(stat, shown);
    const where = fs.readlinkSync(fdPath(handle));
    return { handle, stat, real: where, where };
  } catch (err) {
    handle.closeNow();
    throw err;
  }
}

function openForReading(file: string, shown: string): OpenFile {
  try {
    return OpenFile.open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    openError(err, shown);
  }
}

/** Open a subfolder of an open folder; a symlink (or anything not a folder) there is refused. */
export async function openSubdir(dir: { readonly fd: number }, name: string, shown: string): Promise<OpenFile> {
  try {
    return OpenFile.open(fdPath(dir, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (err) {
    if (code(err) === "ELOOP" || code(err) === "ENOTDIR") throw new ToolError(`'${shown}' is not a folder (a symlink or a file is in the way).`);
    openError(err, shown);
  }
}

/**
 * Open the folder `real` (inside root) by walking down from root one name at a time, each opened
 * relative to the folder before it without following links: what comes back is inside root by
 * construction, whatever is renamed meanwhile. With create, missing folders are made on the way.
 */
export async function openDirIn(root: string, real: string, options: { create?: boolean; shown?: string } = {}): Promise<OpenFile> {
  if (!isInside(root, real)) throw new ToolError(`'${options.shown ?? real}' is outside the workspace.`);
  const names = path.relative(root, real).split(path.sep).filter(Boolean);
  let dir = OpenFile.open(root, O_RDONLY | O_DIRECTORY);
  try {
    for (let i = 0; i < names.length; i++) {
      const shown = names.slice(0, i + 1).join("/");
      if (options.create) mkdirUnlessThere(fdPath(dir, names[i]!));
      const next = await openSubdir(dir, names[i]!, shown);
      dir.closeNow();
      dir = next;
    }
    return dir;
  } catch (err) {
    dir.closeNow();
    throw err;
  }
}

function mkdirUnlessThere(folder: string): void {
  try {
    fs.mkdirSync(folder);
  } catch (err) {
    if (code(err) !== "EEXIST") throw err;
  }
}

/** Run fn with the folder open, closing it afterwards. */
export async function withDir<T>(root: string, real: string, options: { create?: boolean; shown?: string }, fn: (dir: OpenFile) => Promise<T>): Promise<T> {
  const dir = await openDirIn(root, real, options);
  try {
    return await fn(dir);
  } finally {
    dir.closeNow();
  }
}

/** An entry's own metadata (a link's, not its target's), or null when it is gone. In place, as OpenFile's calls are (./open-file.ts). */
export function lstatAt(dir: { readonly fd: number }, name: string): fs.Stats | null {
  try {
    return fs.lstatSync(fdPath(dir, name));
  } catch {
    return null;
  }
}

/** Run fn with the subfolder `name` of an open folder open (never through a link), closing it afterwards. */
export async function withSubdir<T>(dir: { readonly fd: number }, name: string, fn: (sub: OpenFile) => Promise<T>): Promise<T> {
  const sub = await openSubdir(dir, name, name);
  try {
    return await fn(sub);
  } finally {
    sub.closeNow();
  }
}
