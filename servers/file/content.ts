// What a file holds (text, image, other binary) and how to replace one atomically.
import crypto from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";

const MIME: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".bmp": "image/bmp",
  ".ico": "image/x-icon",
  ".svg": "image/svg+xml",
  ".pdf": "application/pdf",
  ".zip": "application/zip",
  ".gz": "application/gzip",
  ".json": "application/json",
  ".md": "text/markdown",
  ".html": "text/html",
  ".htm": "text/html",
  ".css": "text/css",
  ".csv": "text/csv",
  ".xml": "application/xml",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".ts": "text/x-typescript",
  ".py": "text/x-python",
  ".txt": "text/plain",
};

/** Raster images the client can render; SVG is text and read as such. */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/x-icon"]);

export function mimeTypeOf(file: string, isText?: boolean): string {
  const known = MIME[path.extname(file).toLowerCase()];
  if (known) return known;
  return isText === false ? "application/octet-stream" : "text/plain";
}

export function isImage(file: string): boolean {
  return IMAGE_TYPES.has(mimeTypeOf(file));
}

/** Text means valid UTF-8 without NUL bytes; only the head is checked so huge files stay cheap. */
export function looksLikeText(head: Buffer): boolean {
  if (head.includes(0)) return false;
  try {
    // stream: true tolerates a multi-byte character cut at the end of the sample
    new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/** How much of a file decides whether it is text. */
export const HEAD_BYTES = 64 * 1024;

export async function readHead(file: string, bytes = HEAD_BYTES): Promise<Buffer> {
  const handle = await fsp.open(file, "r");
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

export type FileKind = "text" | "image" | "binary";

/** What a file holds, from its name and its first bytes (read here unless the caller has them). */
export async function kindOf(file: string, head?: Buffer): Promise<FileKind> {
  if (isImage(file)) return "image";
  return looksLikeText(head ?? (await readHead(file))) ? "text" : "binary";
}

/** Temp files carry this marker so a leftover from a crash is recognisable. */
export const TEMP_MARKER = ".agentbox-tmp-";

export interface AtomicWriteOptions {
  /** Keep the current content and add `data` after it. */
  append?: boolean;
  /** Mode for a new file; an existing file keeps its own. */
  mode?: number;
  /** Called after each chunk is on disk (for progress). */
  onChunk?(written: number, total: number): void | Promise<void>;
}

const CHUNK = 1 << 20;

/**
 * Write `data` to `target` so that a reader, or a crash, never sees half a file: the new content
 * goes to a temp file in the same directory (same filesystem, so rename is atomic), is flushed to
 * disk, then renamed over the target. Appending copies the current content into the temp file
 * first, which keeps the same guarantee.
 */
export async function atomicWrite(target: string, data: Buffer, options: AtomicWriteOptions = {}): Promise<number> {
  const dir = path.dirname(target);
  const temp = path.join(dir, `.${path.basename(target)}${TEMP_MARKER}${crypto.randomBytes(6).toString("hex")}`);
  const existing = await fsp.stat(target).catch(() => null);
  const mode = existing ? existing.mode & 0o7777 : (options.mode ?? 0o644);
  try {
    if (options.append && existing) await fsp.copyFile(target, temp);
    const handle = await fsp.open(temp, options.append && existing ? "a" : "w", mode);
    try {
      for (let offset = 0; offset < data.length; offset += CHUNK) {
        const chunk = data.subarray(offset, Math.min(offset + CHUNK, data.length));
        await handle.write(chunk);
        await options.onChunk?.(offset + chunk.length, data.length);
      }
      await handle.sync();
      await handle.chmod(mode); // the umask may have narrowed the open() mode
    } finally {
      await handle.close();
    }
    await fsp.rename(temp, target);
  } catch (err) {
    await fsp.rm(temp, { force: true });
    throw err;
  }
  return (existing && options.append ? existing.size : 0) + data.length;
}

export function statOrNull(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}

export function typeOf(st: fs.Stats): "file" | "directory" | "symlink" | "other" {
  if (st.isSymbolicLink()) return "symlink";
  if (st.isDirectory()) return "directory";
  if (st.isFile()) return "file";
  return "other";
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
