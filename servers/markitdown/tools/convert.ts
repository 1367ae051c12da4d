// markitdown `convert`: any source → Markdown, paged or saved whole to the workspace.
import path from "node:path";
import { z } from "zod";
import { charPagingInput, pagedText, pageOfText, textPageOutput } from "../../lib/paging.js";
import { defineTool, reply } from "../../lib/tool.js";
import { toolName } from "../../lib/names.js";
import { withDir } from "../../lib/safe-fs.js";
import { atomicWriteAt } from "../../lib/atomic-write.js";
import { relativeToWorkspace, resolveInWorkspace } from "../../lib/workspace.js";
import { convertBytes } from "../../lib/convert.js";
import { loadSource } from "../sources.js";

function envInt(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? Math.floor(value) : fallback;
}

/** Largest document (file, download, decoded content, unpacked archive) we convert. */
const MAX_BYTES = envInt("MARKITDOWN_MAX_BYTES", 50 * 1024 * 1024);
const FETCH_TIMEOUT_MS = envInt("MARKITDOWN_TIMEOUT_MS", 30_000);

const convert = defineTool({
  name: "convert",
  // a call may run long: a client of the tasks extension gets a task it can poll, not a request held open
  taskSupport: "optional",
  title: "Convert a document to Markdown",
  description:
    "Convert a document (PDF, Word, Excel, HTML, CSV, JSON, RSS, Jupyter, ZIP of these…) from `source` or base64 `content` " +
    "to Markdown. Long output is paged (offset/limit characters), or written whole to `saveTo`.",
  input: {
    source: z.string().optional().describe("Workspace path, or file:, http(s): or data: URL"),
    content: z.string().optional().describe("The document, base64 (instead of source); needs `name` or `format`"),
    name: z.string().optional().describe("File name for `content` (its extension picks the converter)"),
    format: z.string().optional().describe("Force a format by extension or id (pdf, docx, html, csv…)"),
    ...charPagingInput,
    saveTo: z.string().optional().describe("Workspace path to write the whole Markdown to instead"),
    overwrite: z.boolean().default(false).describe("With saveTo: replace an existing file"),
  },
  output: {
    title: z.string().nullable().describe("Document title when known"),
    format: z.string().describe("Format id that was used (pdf, docx, …)"),
    source: z.string().describe("The source as converted"),
    savedTo: z.string().optional().describe("Workspace path the Markdown was written to"),
    ...textPageOutput,
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  async run(args, ctx) {
    const loaded = await loadSource(args, { workspace: ctx.workspace, maxBytes: MAX_BYTES, timeoutMs: FETCH_TIMEOUT_MS, signal: ctx.signal });
    ctx.log.debug("converting", { source: loaded.label, ext: loaded.ext, bytes: loaded.bytes.length });
    const doc = await convertBytes(loaded.bytes, loaded.ext, { url: loaded.url, maxBytes: MAX_BYTES });
    const base = { title: doc.title, format: doc.format.id, source: loaded.label };

    if (args.saveTo) {
      const target = resolveInWorkspace(ctx.workspace, args.saveTo, { allowMissing: true, noFollowFinal: true });
      const shown = relativeToWorkspace(ctx.workspace, target);
      // the folder is opened from the workspace root without following links and the file replaced
      // by name inside it, so a link swapped in after the check is replaced, never written through
      await withDir(ctx.workspace, path.dirname(target), { create: true, shown: relativeToWorkspace(ctx.workspace, path.dirname(target)) }, (dir) =>
        atomicWriteAt(dir, path.basename(target), Buffer.from(doc.markdown, "utf8"), { exclusive: !args.overwrite, shown }),
      );
      const all = pageOfText(doc.markdown, 0, Number.MAX_SAFE_INTEGER);
      const { text: _text, ...counts } = all;
      const title = doc.title ? ` ("${doc.title}")` : "";
      return reply.data(`Converted ${loaded.label}${title} (${doc.format.label}) to ${all.totalChars} characters of Markdown, saved to ${shown}.`, {
        ...base,
        savedTo: shown,
        ...counts,
      });
    }

    const page = pageOfText(doc.markdown, args.offset, args.limit);
    const { text: _text, ...counts } = page;
    const heading = doc.title && page.offset === 0 ? `<!-- title: ${doc.title} -->\n` : "";
    return reply.data(heading + pagedText(page, toolName("convert")), { ...base, ...counts });
  },
});

export default [convert];
