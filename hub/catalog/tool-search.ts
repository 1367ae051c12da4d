// hub_find_tools: search mode's way in. Ranks the session's selectable tools against a query with
// MiniSearch (BM25+ over name, title, description and parameters, names weighted most), so a
// session can start with a catalog of a few hundred bytes and pull in tools as it needs them.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import MiniSearch from "minisearch";
import { z } from "zod";

export const FIND_TOOLS = "hub_find_tools";
const DEFAULT_LIMIT = 5;
const MAX_LIMIT = 20;

export const findToolsTool: Tool = {
  name: FIND_TOOLS,
  description:
    "Find tools for a task among the tools of all this hub's servers. " +
    "Returns the best matches with their input schemas and adds them to your tool list; call them by name.",
  inputSchema: {
    type: "object",
    properties: {
      query: { type: "string", description: "What you want to do, in a few words: \"click a button on a web page\"." },
      limit: { type: "integer", minimum: 1, maximum: MAX_LIMIT, description: `How many tools to return (default ${DEFAULT_LIMIT}).` },
    },
    required: ["query"],
  },
  outputSchema: {
    type: "object",
    properties: {
      query: { type: "string" },
      matches: {
        type: "array",
        items: {
          type: "object",
          properties: {
            name: { type: "string" },
            description: { type: "string" },
            inputSchema: { type: "object" },
            score: { type: "number" },
          },
          required: ["name", "inputSchema", "score"],
        },
      },
    },
    required: ["query", "matches"],
  },
  annotations: { title: "Find tools", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};

const input = z
  .object({
    query: z.string().trim().min(1, "say what the tool should do, in a few words").max(500, "at most 500 characters"),
    limit: z.number().int().min(1).max(MAX_LIMIT, `at most ${MAX_LIMIT}`).optional(),
  })
  .strict();

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

let cached: { tools: Tool[]; index: MiniSearch<Doc> } | undefined;

/** The index of these tools, rebuilt only when the list changed (the catalog changes rarely). */
function indexOf(tools: Tool[]): MiniSearch<Doc> {
  if (cached && cached.tools.length === tools.length && cached.tools.every((t, i) => t === tools[i])) return cached.index;
  const index = new MiniSearch<Doc>({
    fields: ["name", "title", "description", "params"],
    processTerm,
    searchOptions: { boost: { name: 4, title: 3, description: 1, params: 0.5 }, prefix: (term) => term.length > 3, fuzzy: (term) => (term.length > 4 ? 0.2 : false) },
  });
  index.addAll(tools.map(toDoc));
  cached = { tools, index };
  return index;
}

const SESSIONLESS_NOTE =
  "callable by name now; your tools/list stays the same, because this request has no MCP session (no Mcp-Session-Id) to keep a list for. Initialize a session to have found tools listed";

export interface FindOutcome {
  result: CallToolResult;
  /** The tools returned, to add to the session's catalog. */
  names: string[];
}

/**
 * Rank the tools `allowed` for the session against the call's query. The index covers `all` the
 * hub's tools, shared by every session whatever its selection; `allowed` filters the ranking.
 */
/**
 * @param sessionless the caller has no MCP session (a plain JSON POST without Mcp-Session-Id): no
 * tool list of its own grows, so the answer says the found tools are called by name instead
 */
export function findTools(args: Record<string, unknown>, all: Tool[], allowed: (name: string) => boolean, sessionless = false): FindOutcome {
  const parsed = input.safeParse(args);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`).join("; ");
    const text = `Invalid arguments for ${FIND_TOOLS}: ${problems}. Give {"query": "what you want to do", "limit": 1-${MAX_LIMIT}}.`;
    return { result: { content: [{ type: "text", text }], isError: true }, names: [] };
  }
  const { query, limit = DEFAULT_LIMIT } = parsed.data;
  const byName = new Map(all.map((t) => [t.name, t]));
  const hits = indexOf(all).search(query, { filter: (hit) => allowed(hit.id) }).slice(0, limit);
  const matches = hits.map((hit) => {
    const tool = byName.get(hit.id)!;
    return { name: tool.name, description: tool.description ?? "", inputSchema: tool.inputSchema, score: Math.round(hit.score * 100) / 100 };
  });
  const text = matches.length
    ? `${matches.length} tool${matches.length === 1 ? "" : "s"} for "${query}", ${sessionless ? SESSIONLESS_NOTE : "now in your tool list; call them by name"}:\n\n` +
      matches.map((m) => `${m.name}: ${m.description}\ninput: ${JSON.stringify(m.inputSchema)}`).join("\n\n")
    : `No tool matches "${query}". Try other words for the task (what it acts on, what it does).`;
  return { result: { content: [{ type: "text", text }], structuredContent: { query, matches } }, names: matches.map((m) => m.name) };
}
