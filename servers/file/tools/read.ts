// read and read_many: text by line window (paged), images as image content, other binaries as
// base64 only when asked.
import type fs from "node:fs";
import type { ReadableFile } from "../../lib/open-file.js";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { toolName } from "../../lib/names.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { defineTool, reply, ToolError, type ToolContext } from "../../lib/tool.js";
import { errorMessage } from "../../lib/log.js";
import { mimeTypeOf } from "../../lib/mime.js";
import { kindOf, formatSize, readAt } from "../content.js";
import { limitField, limitTooBig, nextOffsetOutput, nextPageHint, offsetField } from "../../lib/paging.js";
import { DEFAULT_LINE_LIMIT, linePageOfText, MAX_LINE_LIMIT, pageText, readLines, WHOLE_READ_BYTES } from "../lines.js";
import { rel, withOpened } from "../paths.js";

const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
const DEFAULT_BYTE_LIMIT = 1024 * 1024;
const MAX_BYTE_LIMIT = 8 * 1024 * 1024;

const pathParam = z.string().describe("Relative to the workspace (or absolute inside it)");

const readOutput = {
  path: z.string(),
  kind: z.enum(["text", "image", "binary"]),
  mimeType: z.string(),
  size: z.number().describe("File size in bytes."),
  text: z.string().optional().describe("The returned lines (text files)."),
  offset: z.number().describe("Index of the first returned line (from 0), or byte with encoding 'base64'."),
  nextOffset: nextOffsetOutput,
  startLine: z.number().optional().describe("Number of the first returned line as lineNumbers prints it (offset + 1)."),
  endLine: z.number().optional(),
  totalLines: z.number().optional().describe("Known when the page reached the end of the file."),
  bytes: z.number().optional().describe("Bytes returned as base64."),
};

function assertFile(st: fs.Stats, userPath: string): fs.Stats {
  if (st.isDirectory()) throw new ToolError(`'${userPath}' is a directory; use ${toolName("list")} or ${toolName("tree")} to see its entries.`);
  if (!st.isFile()) throw new ToolError(`'${userPath}' is not a regular file.`);
  return st;
}

const read = defineTool({
  name: "read",
  title: "Read a file",
  description:
    "Read a file. Text by line window (offset/limit; next page: offset=nextOffset), images as image content; " +
    "other binary files are only described unless encoding is 'base64', then offset/limit count bytes.",
  input: {
    path: pathParam,
    offset: offsetField("line or byte").default(0).describe("First line from 0 (line number - 1); with encoding 'base64', first byte"),
    limit: limitField("lines or bytes", MAX_BYTE_LIMIT)
      .optional()
      .describe(`Lines (default ${DEFAULT_LINE_LIMIT}, max ${MAX_LINE_LIMIT}); with encoding 'base64', bytes (default 1 MiB, max 8 MiB)`),
    lineNumbers: z.boolean().default(false).describe("Prefix lines with number and tab"),
    encoding: z.enum(["auto", "base64"]).default("auto").describe("'base64': the raw bytes of any file"),
  },
  output: readOutput,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ path: userPath, offset, limit, lineNumbers, encoding }, ctx) {
    // opened once and read only through that descriptor, which is proven to be inside the workspace
    return withOpened(ctx, userPath, async ({ handle, stat, real: file }) => {
      const st = assertFile(stat, userPath);
      const shown = rel(ctx, file);
      if (encoding === "base64") return readBytes(handle, file, shown, st.size, offset, limit);
      if (limit !== undefined && limit > MAX_LINE_LIMIT) throw new ToolError(limitTooBig("lines", MAX_LINE_LIMIT));
      // a small file is read once, for its kind and its lines alike
      const whole = st.size <= WHOLE_READ_BYTES ? await readAt(handle, st.size) : undefined;
      const kind = await kindOf(file, whole ?? handle);
      const mimeType = mimeTypeOf(file, kind === "text");
      if (kind === "image") {
        if (st.size > MAX_IMAGE_BYTES) {
          throw new ToolError(
            `Image '${shown}' is ${formatSize(st.size)}, over the ${formatSize(MAX_IMAGE_BYTES)} image limit; read it with encoding 'base64' in pages.`,
          );
        }
        const data = (whole ?? (await readAt(handle, st.size))).toString("base64");
        return reply.data(`${shown} (${mimeType}, ${formatSize(st.size)})`, { path: shown, kind, mimeType, size: st.size, offset: 0, nextOffset: null }, [
          { type: "image", data, mimeType },
        ]);
      }
      if (kind === "binary") {
        const text = `${shown} is a binary file (${mimeType}, ${formatSize(st.size)}); pass encoding 'base64' to get its bytes.`;
        return reply.data(text, { path: shown, kind, mimeType, size: st.size, offset: 0, nextOffset: null });
      }
      const lineLimit = limit ?? DEFAULT_LINE_LIMIT;
      const page = whole ? linePageOfText(whole.toString("utf8"), offset, lineLimit) : await readLines(handle, offset, lineLimit);
      if (page.lines.length === 0 && offset > 0) {
        throw new ToolError(`offset ${offset} is past the end of '${shown}' (${page.totalLines} lines: offsets 0-${Math.max(0, (page.totalLines ?? 1) - 1)}).`);
      }
      const startLine = offset + 1;
      const endLine = offset + page.lines.length;
      let text = pageText(page, lineNumbers);
      const notes: string[] = [];
      if (page.truncatedLine) notes.push(`line ${startLine} is longer than one page and was cut`);
      if (page.nextOffset !== null) {
        notes.push(`showing lines ${startLine}-${endLine}; more follows: ${nextPageHint(page.nextOffset, toolName("read"))}`);
      } else if (offset > 0) notes.push(`lines ${startLine}-${endLine} of ${page.totalLines}; end of file`);
      if (notes.length) text += `\n\n[${notes.join("; ")}]`;
      return reply.data(text, {
        path: shown,
        kind,
        mimeType,
        size: st.size,
        text: pageText(page, false),
        offset,
        nextOffset: page.nextOffset,
        startLine,
        endLine,
        totalLines: page.totalLines,
      });
    });
  },
});

async function readBytes(handle: ReadableFile, file: string, shown: string, size: number, offset: number, limit?: number): Promise<CallToolResult> {
  const length = limit ?? DEFAULT_BYTE_LIMIT;
  if (offset > size) throw new ToolError(`offset ${offset} is past the end of '${shown}' (${size} bytes).`);
  const buf = await readAt(handle, Math.min(length, size - offset), offset);
  const end = offset + buf.length;
  const nextOffset = end < size ? end : null;
  const mimeType = mimeTypeOf(file, false);
  const more = nextOffset !== null ? `; more follows: ${nextPageHint(nextOffset, toolName("read"))} and encoding 'base64'` : "";
  const note = `${shown}: bytes ${offset}-${end} of ${size}${more}`;
  return reply.data(note, { path: shown, kind: "binary", mimeType, size, offset, nextOffset, bytes: buf.length }, [
    { type: "resource", resource: { uri: pathToFileURL(file).href, mimeType, blob: buf.toString("base64") } },
  ]);
}

const MAX_MANY = 50;
const MANY_LINE_LIMIT = 500;

const readMany = defineTool({
  name: "read_many",
  title: "Read several files",
  description:
    `Read up to ${MAX_MANY} text files at once, each up to \`limit\` lines. A file that cannot be read ` + "is reported in place; binary files are skipped.",
  input: {
    paths: z.array(z.string()).min(1).max(MAX_MANY),
    limit: z.number().int().min(1).default(MANY_LINE_LIMIT).describe("Lines per file (from the start)"),
    lineNumbers: z.boolean().default(false).describe("Prefix lines with number and tab"),
  },
  output: {
    files: z.array(
      z.object({
        path: z.string(),
        ok: z.boolean(),
        text: z.string().optional(),
        nextOffset: nextOffsetOutput.optional().describe("offset to read the rest from, or null when the file was read to its end"),
        error: z.string().optional(),
      }),
    ),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ paths, limit, lineNumbers }, ctx) {
    const files = [];
    for (const p of paths) files.push(await readOne(ctx, p, limit, lineNumbers));
    const text = files
      .map((f) => {
        if (!f.ok) return `==> ${f.path} <==\n[error: ${f.error}]`;
        const more = typeof f.nextOffset === "number" ? `\n[more follows: ${nextPageHint(f.nextOffset, toolName("read"))}]` : "";
        return `==> ${f.path} <==\n${f.text}${more}`;
      })
      .join("\n\n");
    return reply.data(text, { files });
  },
});

async function readOne(ctx: ToolContext, userPath: string, limit: number, lineNumbers: boolean) {
  try {
    return await withOpened(ctx, userPath, async ({ handle, stat, real }) => {
      assertFile(stat, userPath);
      if ((await kindOf(real, handle)) !== "text") return { path: userPath, ok: false, error: `binary file skipped; use ${toolName("read")}` };
      const page = await readLines(handle, 0, limit);
      const text = pageText(page, lineNumbers);
      return { path: userPath, ok: true, text, nextOffset: page.nextOffset };
    });
  } catch (err) {
    return { path: userPath, ok: false, error: err instanceof ToolError ? err.message : errorMessage(err) };
  }
}

export default [read, readMany];
