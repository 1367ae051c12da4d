// What a file holds (text, image, other binary), and how to describe it.
import fs from "node:fs";
import type { ReadableFile } from "../lib/open-file.js";
import { mimeTypeOf } from "../lib/mime.js";

/** Raster images the client can render; SVG is text and read as such. */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/x-icon"]);

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

/** Up to `length` bytes of an open file from `position` (a pread: the file's offset is untouched). */
export async function readAt(handle: ReadableFile, length: number, position = 0): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buf, 0, length, position);
  return buf.subarray(0, bytesRead);
}

export type FileKind = "text" | "image" | "binary";

/** What a file holds, from its name and its first bytes (read from the open file unless the caller has them). */
export async function kindOf(file: string, content: ReadableFile | Buffer): Promise<FileKind> {
  if (isImage(file)) return "image";
  return looksLikeText(Buffer.isBuffer(content) ? content.subarray(0, HEAD_BYTES) : await readAt(content, HEAD_BYTES)) ? "text" : "binary";
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
