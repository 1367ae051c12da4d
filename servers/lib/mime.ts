// The MIME type a file name suggests, for the file server's reads and resources and for the
// browser's workspace origin: one table, so a file is the same type wherever it is served from.
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

/** By extension; an unknown one is plain text, or octet-stream when the caller knows it is binary. */
export function mimeTypeOf(file: string, isText?: boolean): string {
  const known = MIME[path.extname(file).toLowerCase()];
  if (known) return known;
  return isText === false ? "application/octet-stream" : "text/plain";
}
