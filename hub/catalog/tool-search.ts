// hub_find_tools: search mode's way in. Ranks the session's selectable tools against a query with
// MiniSearch (BM25+ over name, title, description and parameters, names weighted most), so a
// session can start with a catalog of a few hundred bytes and pull in tools as it needs them.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import MiniSearch from "minisearch";
import { z } from "zod";
import { defineTool, listedTool, reply, type CallContext } from "../../servers/lib/tool.js";
import { offeredToModel } from "./app-uris.js";

export const FIND_TOOLS = "hub_find_tools";
const DEFAULT_LIMIT = 5;
const MAX_LIMIT = 20;

/** What hub_find_tools works with: the session's view of the catalog, and how to grow its list. */
export interface FindToolsContext extends CallContext {
  search: ToolSearch;
  /** Every tool of the hub and its servers, whatever the session's selection. */
  tools: Tool[];
  /** Whether the session's selection allows a tool. */
  allows(name: string): boolean;
  /** The caller has no MCP session (a plain JSON POST without Mcp-Session-Id): no tool list grows. */
  sessionless: boolean;
  /** Add the tools found to the session's tool list (and tell its client the list changed). */
  found(names: string[]): Promise<void>;
}

const SESSIONLESS_NOTE =
  "callable by name now; your tools/list stays the same, because this request has no MCP session (no Mcp-Session-Id) to keep a list for. Initialize a session to have found tools listed";

/** hub_find_tools as served: validated and run by the shared tool helper. */
export const findToolsTool = defineTool({
  name: FIND_TOOLS,
  title: "Find tools",
  description:
    "Find tools for a task among the tools of all this hub's servers. " +
    "Returns the best matches with their input schemas and adds them to your tool list; call them by name.",
  input: {
    query: z
      .string()
      .trim()
      .min(1, "say what the tool should do, in a few words")
      .max(500, "at most 500 characters")
      .describe('What you want to do, in a few words: "click a button on a web page".'),
    offset: z.number().int().min(0).default(0).describe("Index of the first match to return, best first: nextOffset of the previous page."),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_LIMIT, `at most ${MAX_LIMIT}`)
      .default(DEFAULT_LIMIT)
      .describe(`Most matches to return (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}).`),
  },
  output: {
    query: z.string(),
    matches: z.array(z.object({ name: z.string(), description: z.string(), inputSchema: z.record(z.string(), z.unknown()), score: z.number() })),
    total: z.number().describe("Matches in all"),
    nextOffset: z.number().nullable().describe("offset of the next page of matches, or null when this was the last"),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ query, offset, limit }, ctx: FindToolsContext) {
    const byName = new Map(ctx.tools.map((t) => [t.name, t]));
    // a tool only its app may call is the host's to keep from the model: search mode must not offer it
    const hits = ctx.search.rank(ctx.tools, query, (name) => ctx.allows(name) && offeredToModel(byName.get(name)!));
    const matches = hits.slice(offset, offset + limit).map((hit) => {
      const tool = byName.get(hit.id)!;
      return { name: tool.name, description: tool.description ?? "", inputSchema: tool.inputSchema, score: Math.round(hit.score * 100) / 100 };
    });
    const nextOffset = offset + matches.length < hits.length ? offset + matches.length : null;
    if (!ctx.sessionless) await ctx.found(matches.map((m) => m.name));
    const more = nextOffset === null ? "" : `\n\n[${hits.length - nextOffset} more: call ${FIND_TOOLS} with offset=${nextOffset}]`;
    const text = matches.length
      ? `${matches.length} tool${matches.length === 1 ? "" : "s"} for "${query}", ${ctx.sessionless ? SESSIONLESS_NOTE : "now in your tool list; call them by name"}:\n\n` +
        matches.map((m) => `${m.name}: ${m.description}\ninput: ${JSON.stringify(m.inputSchema)}`).join("\n\n") +
        more
      : hits.length
        ? `(offset ${offset} is past the end: "${query}" has ${hits.length} matches)`
        : `No tool matches "${query}". Try other words for the task (what it acts on, what it does).`;
    return reply.data(text, { query, matches, total: hits.length, nextOffset });
  },
});

/** hub_find_tools as tools/list shows it. */
export const findToolsListed: Tool = listedTool(findToolsTool);

// words that say nothing about which tool is meant; dropped from queries and documents alike
const STOP_WORDS = new Set(
  "a an and are as at be by can do for from how i if in into is it its me my of on or so that the this to use using want with you your".split(" "),
);

/** Lower case, no stop words, plurals and -ing folded ("clicks", "clicking" → "click"). */
function processTerm(term: string): string | null {
  const word = term.toLowerCase();
  if (STOP_WORDS.has(word)) return null;
  if (word.length > 5 && word.endsWith("ing")) return word.slice(0, -3);
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

interface Doc {
  id: string;
  name: string;
  title: string;
  description: string;
  params: string;
}

function paramText(schema: Tool["inputSchema"]): string {
  const props = (schema.properties ?? {}) as Record<string, { description?: unknown }>;
  return Object.entries(props)
    .map(([name, p]) => `${name.replace(/([a-z])([A-Z])/g, "$1 $2")} ${typeof p?.description === "string" ? p.description : ""}`)
    .join(" ");
}

function toDoc(tool: Tool): Doc {
  return {
    id: tool.name,
    // browser_click → "browser click", so each word of a name is a term
    name: tool.name.replace(/[_-]+/g, " "),
    title: tool.title ?? tool.annotations?.title ?? "",
    description: tool.description ?? "",
    params: paramText(tool.inputSchema),
  };
}

/** The search index of a catalog's tools, rebuilt only when the list changed (the catalog changes rarely). */
export class ToolSearch {
  private cached?: { tools: Tool[]; index: MiniSearch<Doc> };

  /** The tools `allowed` ranked against a query, best first. The index covers all of `tools`. */
  rank(tools: Tool[], query: string, allowed: (name: string) => boolean): Array<{ id: string; score: number }> {
    return this.indexOf(tools).search(query, { filter: (hit) => allowed(hit.id) });
  }

  private indexOf(tools: Tool[]): MiniSearch<Doc> {
    const cached = this.cached;
    if (cached && cached.tools.length === tools.length && cached.tools.every((t, i) => t === tools[i])) return cached.index;
    const index = new MiniSearch<Doc>({
      fields: ["name", "title", "description", "params"],
      processTerm,
      searchOptions: {
        boost: { name: 4, title: 3, description: 1, params: 0.5 },
        prefix: (term) => term.length > 3,
        fuzzy: (term) => (term.length > 4 ? 0.2 : false),
      },
    });
    index.addAll(tools.map(toDoc));
    this.cached = { tools, index };
    return index;
  }
}
