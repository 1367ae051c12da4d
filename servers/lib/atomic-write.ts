// Writing a file so that no reader, and no crash, ever sees half of it, in a folder held open
// (./safe-fs.ts): the content goes to a temp file created exclusively beside it, is flushed, and
// is renamed over the name (or linked to it, when the name must not exist yet).
import crypto from "node:crypto";
import fs from "node:fs";
import { assertDiskRoom, explainDiskError } from "./disk-budget.js";
import { OpenFile, type ReadableFile } from "./open-file.js";
import { code, fdPath, lstatAt, openFileAt, type OpenedFile } from "./safe-fs.js";
import { ToolError } from "./tool.js";

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;

/** Temp files carry this marker so a leftover from a crash is recognisable. */
export const TEMP_MARKER = ".agentbox-tmp-";

export interface AtomicWriteOptions {
  /** Keep the current content and add `data` after it. */
  append?: boolean;
  /** Fail with EEXIST-style ToolError when `name` exists, instead of replacing it. */
  exclusive?: boolean;
  /** Mode for a new file; an existing file keeps its own. */
  mode?: number;
  /** Called after each chunk is on disk (for progress). */
  onChunk?(written: number, total: number): void | Promise<void>;
  /** How to name the file in messages (default: its name). */
  shown?: string;
}

const CHUNK = 1 << 20;

/**
 * Write `data` (bytes, or the content of an open file) to `name` in the open folder `dir`, so that
 * a reader, or a crash, never sees half a file: it goes to a temp file created exclusively in the
 * same folder, is flushed, then renamed over `name` (or linked to it when exclusive, which fails
 * if `name` appeared meanwhile). rename replaces a symlink at `name`, never writes through it.
 * Appending copies the current content (opened without following a link) into the temp first.
 */
export async function atomicWriteAt(dir: { readonly fd: number }, name: string, data: Buffer | OpenedFile, options: AtomicWriteOptions = {}): Promise<number> {
  const shown = options.shown ?? name;
  const existing = lstatAt(dir, name);
  if (existing?.isDirectory()) throw new ToolError(`'${shown}' is a directory; give a file path.`);
  if (existing && options.exclusive) throw new ToolError(`'${shown}' already exists; pass overwrite: true to replace it.`);
  const keep = existing?.isFile() ? existing : null;
  const mode = keep ? keep.mode & 0o7777 : (options.mode ?? 0o644);
  const temp = `.${name.slice(0, 100)}${TEMP_MARKER}${crypto.randomBytes(6).toString("hex")}`;
  const total = Buffer.isBuffer(data) ? data.length : data.stat.size;
  const kept = keep?.size ?? 0;
  // what the file adds once renamed over the one it replaces
  await assertDiskRoom((options.append ? kept : 0) + total - kept);
  let size = 0;
  let out: OpenFile;
  try {
    out = OpenFile.open(fdPath(dir, temp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  } catch (err) {
    throw await explainDiskError(err, shown);
  }
  try {
    try {
      if (options.append && keep) {
        const current = await openFileAt(dir, name, shown);
        try {
          size += await pipe(current.handle, out);
        } finally {
          await current.handle.close();
        }
      }
      if (Buffer.isBuffer(data)) {
        for (let offset = 0; offset < data.length; offset += CHUNK) {
          const chunk = data.subarray(offset, Math.min(offset + CHUNK, data.length));
          await out.write(chunk);
          await options.onChunk?.(offset + chunk.length, total);
        }
        size += data.length;
      } else {
        size += await pipe(data.handle, out, (n) => options.onChunk?.(n, total));
      }
      await out.sync();
      await out.chmod(mode); // the umask may have narrowed the open() mode
    } finally {
      out.closeNow();
    }
    if (options.exclusive) {
      try {
        fs.linkSync(fdPath(dir, temp), fdPath(dir, name));
      } catch (err) {
        throw code(err) === "EEXIST" ? new ToolError(`'${shown}' already exists; pass overwrite: true to replace it.`) : err;
      }
      fs.unlinkSync(fdPath(dir, temp));
    } else {
      fs.renameSync(fdPath(dir, temp), fdPath(dir, name));
    }
  } catch (err) {
    try {
      fs.unlinkSync(fdPath(dir, temp));
    } catch {
      // never made, or already renamed
    }
    throw await explainDiskError(err, shown);
  }
  return size;
}

/** Copy everything from an open file (from its start) to another; returns the bytes copied. */
async function pipe(from: ReadableFile, to: OpenFile, onChunk?: (written: number) => unknown): Promise<number> {
  const buf = Buffer.alloc(CHUNK);
  let position = 0;
  for (;;) {
    const { bytesRead } = await from.read(buf, 0, buf.length, position);
    if (bytesRead === 0) return position;
    await to.write(buf.subarray(0, bytesRead));
    position += bytesRead;
    await onChunk?.(position);
  }
}

/**
 * Copy an open file to a new entry `name` in an open folder, keeping its mode and times. The copy
 * is created exclusively without following links, and its mode and times are set through its own
 * descriptor, so nothing swapped in meanwhile is ever chmod-ed or written through.
 */
export async function copyFileAt(from: OpenedFile, dir: { readonly fd: number }, name: string): Promise<void> {
  const mode = from.stat.mode & 0o7777;
  await assertDiskRoom(from.stat.size);
  try {
    const out = OpenFile.open(fdPath(dir, name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
    try {
      await pipe(from.handle, out);
      await out.chmod(mode);
      await out.utimes(from.stat.atime, from.stat.mtime);
    } finally {
      out.closeNow();
    }
  } catch (err) {
    throw await explainDiskError(err, name);
  }
}
