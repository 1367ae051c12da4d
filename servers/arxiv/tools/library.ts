// The downloaded-papers library: `download` (PDF + Markdown into papers/), `read`, `list`.
import { z } from "zod";
import { charPagingInput, pagedText, pageOfText, textPageOutput } from "../../lib/paging.js";
import { defineTool, reply, ToolError } from "../../lib/tool.js";
import { toolName } from "../../lib/names.js";
import { convertBytes } from "../../lib/convert.js";
import { normalizeId } from "../ids.js";
import { findPaper, listPapers, markdownHeader, readMarkdown, savePaper } from "../papers.js";
import { arxiv, fetchPapers } from "../state.js";

const storedShape = {
  id: z.string(),
  title: z.string().nullable(),
  pdf: z.string().nullable().describe("Workspace path of the PDF"),
  markdown: z.string().nullable().describe("Workspace path of the Markdown text"),
  markdownChars: z.number().nullable(),
  downloadedAt: z.string(),
};

const download = defineTool({
  name: "download",
  // a call may run long: a client of the tasks extension gets a task it can poll, not a request held open
  taskSupport: "optional",
  title: "Download an arXiv paper",
  description: () =>
    `Download a paper's PDF into the workspace (papers/<id>.pdf) and convert it to Markdown (papers/<id>.md); read it with ${toolName("read")}. ` +
    "An id without version gets the latest one.",
  input: {
    id: z.string().describe("e.g. 2401.12345, 2401.12345v2 or hep-ex/0307015"),
    force: z.boolean().default(false).describe("Download again even if already in papers/"),
  },
  output: { ...storedShape, alreadyDownloaded: z.boolean() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  async run({ id: rawId, force }, ctx) {
    const id = normalizeId(rawId);
    const existing = force ? undefined : await findPaper(ctx.workspace, id);
    if (existing?.markdown && existing.pdf) {
      return reply.data(`${existing.id} is already downloaded: ${existing.markdown} (${existing.markdownChars} characters), ${existing.pdf}.`, {
        ...existing,
        alreadyDownloaded: true,
      });
    }
    await ctx.progress(0, 3, "fetching metadata");
    const { papers } = await fetchPapers([id], ctx.signal);
    const paper = papers[0];
    if (!paper) throw new ToolError(`arXiv has no paper with id ${id}.`);
    await ctx.progress(1, 3, "downloading PDF");
    const pdf = await arxiv.pdf(paper.id, ctx.signal);
    await ctx.progress(2, 3, "converting to Markdown");
    const converted = await convertBytes(pdf, ".pdf", { maxBytes: arxiv.config.maxPdfBytes });
    const markdown = markdownHeader(paper) + converted.markdown + "\n";
    const paths = await savePaper(ctx.workspace, paper.id, pdf, markdown);
    await ctx.progress(3, 3, "done");
    ctx.log.info("paper downloaded", { id: paper.id, bytes: pdf.length, chars: markdown.length });
    return reply.data(
      `Downloaded ${paper.title} [${paper.id}]: ${paths.pdf} (${pdf.length} bytes) and ${paths.md} (${markdown.length} characters). ` +
        `Read it with ${toolName("read")} { id: "${paper.id}" }.`,
      {
        id: paper.id,
        title: paper.title,
        pdf: paths.pdf,
        markdown: paths.md,
        markdownChars: markdown.length,
        downloadedAt: new Date().toISOString(),
        alreadyDownloaded: false,
      },
    );
  },
});

const read = defineTool({
  name: "read",
  title: "Read a downloaded arXiv paper",
  description: () => `Page through the Markdown text of a paper fetched with ${toolName("download")} (offset/limit characters).`,
  input: {
    id: z.string().describe("Without version: the newest downloaded"),
    ...charPagingInput,
  },
  output: { id: z.string(), title: z.string().nullable(), path: z.string(), ...textPageOutput },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ id: rawId, offset, limit }, ctx) {
    const id = normalizeId(rawId);
    const paper = await findPaper(ctx.workspace, id);
    if (!paper) {
      const have = (await listPapers(ctx.workspace)).map((p) => p.id);
      const hint = have.length ? ` Downloaded: ${have.join(", ")}.` : " No papers are downloaded yet.";
      throw new ToolError(`Paper ${id} is not downloaded; call ${toolName("download")} first.${hint}`);
    }
    const page = pageOfText(await readMarkdown(ctx.workspace, paper), offset, limit);
    const { text: _text, ...counts } = page;
    return reply.data(pagedText(page, toolName("read")), { id: paper.id, title: paper.title, path: paper.markdown!, ...counts });
  },
});

const list = defineTool({
  name: "list",
  title: "List downloaded arXiv papers",
  description: "The papers in the workspace's papers/ folder, with titles and file paths.",
  input: {},
  output: { papers: z.array(z.object(storedShape)) },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(_args, ctx) {
    const papers = await listPapers(ctx.workspace);
    const text = papers.length
      ? papers.map((p) => `- ${p.id}: ${p.title ?? "(no title)"} — ${p.markdown ?? "no .md"}, ${p.pdf ?? "no .pdf"}`).join("\n")
      : `No papers downloaded yet; use ${toolName("download")}.`;
    return reply.data(text, { papers });
  },
});

export default [download, read, list];
