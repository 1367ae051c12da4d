// arxiv `search` and `get`: the arXiv API's metadata as text and structuredContent.
import { z } from "zod";
import { toolName } from "../../lib/names.js";
import { nextOffsetOutput, nextPageHint, pagingInput } from "../../lib/paging.js";
import { defineTool, reply, ToolError } from "../../lib/tool.js";
import { paperSchema } from "../atom.js";
import { buildSearchQuery, SORT_FIELDS } from "../query.js";
import { renderPaper } from "../render.js";
import { arxiv, fetchPapers } from "../state.js";

const search = defineTool({
  name: "search",
  title: "Search arXiv",
  description:
    "Search arXiv papers. `query` takes arXiv syntax (ti:, au:, abs:, cat:, all: prefixes; AND, OR, ANDNOT; parentheses) or plain words " + "(all must match).",
  input: {
    query: z.string().optional().describe('e.g. "diffusion models" or "ti:transformer AND au:vaswani"'),
    categories: z.array(z.string()).optional().describe('Any of these, e.g. ["cs.LG", "stat.ML"]'),
    submittedFrom: z.string().optional().describe("Submitted on or after (YYYY-MM-DD)"),
    submittedTo: z.string().optional().describe("Submitted on or before (YYYY-MM-DD)"),
    ...pagingInput({ unit: "result", defaultLimit: 10, maxLimit: 100, maxOffset: 30_000 }),
    sortBy: z.enum(["relevance", "submitted", "updated"]).default("relevance"),
    sortOrder: z.enum(["descending", "ascending"]).default("descending"),
  },
  output: {
    searchQuery: z.string().describe("The search_query sent to arXiv"),
    total: z.number().describe("Total matching papers"),
    offset: z.number(),
    count: z.number().describe("Papers in this page"),
    nextOffset: nextOffsetOutput,
    papers: z.array(paperSchema),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run(args, ctx) {
    const searchQuery = buildSearchQuery(args);
    const feed = await arxiv.query(
      { searchQuery, offset: args.offset, limit: args.limit, sortBy: SORT_FIELDS[args.sortBy], sortOrder: args.sortOrder },
      ctx.signal,
    );
    const end = args.offset + feed.papers.length;
    const nextOffset = feed.papers.length > 0 && end < feed.total ? end : null;
    const header =
      feed.papers.length === 0
        ? `No papers on this page (${feed.total} match ${searchQuery}).`
        : `${feed.total} papers match ${searchQuery}; showing ${args.offset + 1}-${end}.` +
          (nextOffset !== null ? ` Next page: ${nextPageHint(nextOffset, toolName("search"))}.` : "");
    const body = feed.papers.map((p, i) => renderPaper(p, args.offset + i + 1, 600)).join("\n\n");
    return reply.data(body ? `${header}\n\n${body}` : header, {
      searchQuery,
      total: feed.total,
      offset: args.offset,
      count: feed.papers.length,
      nextOffset,
      papers: feed.papers,
    });
  },
});

const get = defineTool({
  name: "get",
  title: "Get arXiv papers by id",
  description: "Full metadata for one or more arXiv ids (2401.12345, 2401.12345v2, hep-ex/0307015, arXiv:… or abs/pdf URLs).",
  input: {
    ids: z.array(z.string()).min(1).max(50).describe("With or without version"),
  },
  output: { papers: z.array(paperSchema), notFound: z.array(z.string()).describe("Requested ids arXiv has no paper for") },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run({ ids }, ctx) {
    const { papers, notFound } = await fetchPapers(ids, ctx.signal);
    if (papers.length === 0) throw new ToolError(`arXiv has no paper with id ${notFound.join(", ")}.`);
    const missing = notFound.length ? `\n\nNot found: ${notFound.join(", ")}` : "";
    return reply.data(papers.map((p) => renderPaper(p, null)).join("\n\n") + missing, { papers, notFound });
  },
});

export default [search, get];
