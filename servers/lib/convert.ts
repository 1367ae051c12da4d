// Bytes + a format → Markdown. markitdown-ts does most formats; we fill its gaps (JSON, CSV as a
// table, a ZIP reader that waits for every entry and caps sizes) and keep its exiftool step
// (which runs through a shell) away from any name a user chose. Used by the markitdown and arxiv servers.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { MarkItDown } from "markitdown-ts";
import type { CentralDirectoryFile } from "unzipper";
import { ToolError } from "./tool.js";
import { formatByExtension, supportedList, type Format } from "./document-formats.js";

export interface Converted {
  title: string | null;
  markdown: string;
  format: Format;
}

export interface ConvertOptions {
  /** Where the bytes came from, for converters that look at it (Wikipedia, YouTube pages). */
  url?: string;
  /** Cap on the total uncompressed size of a ZIP archive's entries. */
  maxBytes: number;
}

const MAX_ZIP_ENTRIES = 1000;
const MAX_ZIP_DEPTH = 3;
// markitdown-ts, xlsx and unzipper take over a second and 100+ MiB to load: load them on first use,
// so an idle server (and arxiv, which shares this module) starts fast and small
let markitdownInstance: Promise<MarkItDown> | undefined;
const markitdown = () => (markitdownInstance ??= import("markitdown-ts").then((m) => new m.MarkItDown()));
const xlsx = () => import("xlsx");
const unzipper = async () => (await import("unzipper")).default;

export function unsupported(what: string, ext: string): ToolError {
  const shown = ext ? `'${ext}'` : "no file extension";
  return new ToolError(`Cannot convert ${what}: ${shown} is not a supported format. Supported: ${supportedList()}.`);
}

/** Convert one document. `ext` (".pdf") picks the converter; it comes from our format table. */
export async function convertBytes(bytes: Buffer, ext: string, options: ConvertOptions, depth = 0): Promise<Converted> {
  const format = formatByExtension(ext);
  if (!format) throw unsupported("this document", ext);
  switch (format.engine) {
    case "json":
      return { title: null, markdown: jsonToMarkdown(decodeText(bytes)), format };
    case "csv":
      return { title: null, markdown: await csvToMarkdown(decodeText(bytes)), format };
    case "zip":
      return { title: null, markdown: await zipToMarkdown(bytes, options, depth), format };
    case "media":
      return { ...(await viaTempFile(bytes, format, ext)), format };
    case "markitdown":
      return { ...(await viaMarkitdown(bytes, format, ext, options.url)), format };
  }
}

async function viaMarkitdown(bytes: Buffer, format: Format, ext: string, url?: string) {
  let result;
  try {
    result = await (await markitdown()).convertBuffer(bytes, { file_extension: ext, url });
  } catch {
    // markitdown-ts reports failures with the whole input in the message: say it plainly instead
    result = null;
  }
  if (!result) throw new ToolError(`Could not read this ${format.label} (${ext}): the file looks damaged or is not really ${format.label}.`);
  return { title: result.title?.trim() || null, markdown: result.markdown };
}

// markitdown-ts hands a file path to `exiftool` inside a shell command line. It only does so for
// path sources, so we give it one: a fresh private directory and a name we chose ("input" + an
// extension checked against our own table), never the user's file name.
async function viaTempFile(bytes: Buffer, format: Format, ext: string) {
  if (!format.extensions.includes(ext)) throw unsupported("this file", ext);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "agentbox-md-"));
  const file = path.join(dir, `input${ext}`);
  try {
    await fs.writeFile(file, bytes, { mode: 0o600 });
    const result = await (await markitdown()).convert(file).catch(() => null);
    const markdown = result?.markdown.trim() || `*(${format.label}: no metadata could be extracted; ${format.note}.)*`;
    return { title: result?.title?.trim() || null, markdown };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

function decodeText(bytes: Buffer): string {
  return bytes.toString("utf8").replace(/^\uFEFF/, "");
}

/** A fence longer than any backtick run inside, so the content can never close it early. */
export function fenced(body: string, lang: string): string {
  const longest = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${lang}\n${body}\n${fence}`;
}

function jsonToMarkdown(text: string): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ToolError(`Not valid JSON: ${(err as Error).message}`);
  }
  return fenced(JSON.stringify(value, null, 2), "json");
}

// xlsx parses CSV properly (quoted commas, embedded newlines); raw keeps cells as written.
async function csvToMarkdown(text: string): Promise<string> {
  const XLSX = await xlsx();
  const workbook = XLSX.read(text, { type: "string", raw: true });
  const sheet = workbook.Sheets[workbook.SheetNames[0]!];
  const rows = sheet ? XLSX.utils.sheet_to_json<string[]>(sheet, { header: 1, raw: false, defval: "" }) : [];
  return markdownTable(rows.map((row) => row.map((cell) => String(cell))));
}

export function markdownTable(rows: string[][]): string {
  if (rows.length === 0) return "*(empty table)*";
  const width = Math.max(...rows.map((r) => r.length));
  const cell = (s: string | undefined) => (s ?? "").replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/\r?\n/g, "<br>");
  const line = (r: string[]) => `| ${Array.from({ length: width }, (_, i) => cell(r[i])).join(" | ")} |`;
  const [header, ...body] = rows;
  return [line(header!), `|${" --- |".repeat(width)}`, ...body.map(line)].join("\n");
}

async function zipToMarkdown(bytes: Buffer, options: ConvertOptions, depth: number): Promise<string> {
  if (depth >= MAX_ZIP_DEPTH) return "*(nested archive not expanded: too deep)*";
  let directory;
  try {
    directory = await (await unzipper()).Open.buffer(bytes);
  } catch {
    throw new ToolError("Could not read this ZIP archive: it looks damaged or is not a ZIP file.");
  }
  const files = directory.files.filter((f) => f.type === "File");
  if (files.length > MAX_ZIP_ENTRIES) throw new ToolError(`The archive has ${files.length} files; at most ${MAX_ZIP_ENTRIES} are converted.`);
  const declared = files.reduce((sum, f) => sum + f.uncompressedSize, 0);
  if (declared > options.maxBytes) throw new ToolError(`The archive unpacks to ${declared} bytes, over the ${options.maxBytes}-byte limit.`);

  const parts: string[] = [];
  const skipped: string[] = [];
  let budget = options.maxBytes;
  for (const file of files) {
    const ext = path.extname(file.path).toLowerCase();
    if (!formatByExtension(ext)) {
      skipped.push(file.path);
      continue;
    }
    const content = await readEntry(file, budget);
    budget -= content.length;
    try {
      const inner = await convertBytes(content, ext, { maxBytes: budget }, depth + 1);
      parts.push(`## ${file.path}\n\n${inner.markdown}`);
    } catch (err) {
      parts.push(`## ${file.path}\n\n*(not converted: ${(err as Error).message})*`);
    }
  }
  if (skipped.length) parts.push(`## Skipped (unsupported format)\n\n${skipped.map((p) => `- ${p}`).join("\n")}`);
  return parts.join("\n\n") || "*(empty archive)*";
}

// The size in the central directory can lie (zip bombs): count while inflating instead.
async function readEntry(file: CentralDirectoryFile, budget: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of file.stream()) {
    total += (chunk as Buffer).length;
    if (total > budget) throw new ToolError(`The archive unpacks to more than the size limit (at ${file.path}).`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
