// How much of tools/list a model reads: per tool its name, title, description and input schema as
// JSON (what clients put in front of the model on every turn). Shared by bench/catalog.ts, which
// reports it, and test/hub/catalog/catalog-budget.test.ts, which keeps it within the budget.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

/**
 * The full catalog a model sees must stay within this (issue 15: 40 000), plus what the `context`
 * argument of each stateful tool costs since issue 24 (~2.4 KB over 43 tools, hub/catalog/context-argument.ts),
 * plus hub_preview and hub_end_preview since issue 26 (~0.7 KB: a URL for an app an agent started),
 * plus file_changes since issue 26 (0.8 KB: the change feed for clients without resource subscriptions),
 * plus hub_calls since issue 27 (~0.3 KB: a session's recent calls),
 * plus hub_recordings, browser_record and terminal_session_create's `record` since issue 38 (~0.8 KB: replaying what an agent did),
 * and hub_live_view (~0.45 KB with the MCP App's `embedded`: a URL where a person watches a tab or terminal and takes over);
 * then (issue 40) cut back by ~2.6 KB: descriptions that repeated their parameters' or a schema default, and the
 * defaults leaving an argument out means anyway (servers/lib/tool-schema.ts); and by ~3.7 KB more, back to issue 15's
 * 40 000: no description where a parameter's name, type and enum say it all (`url`, `command`, `button`, `waitUntil`,
 * a terminal's `id`...) or where the tool's description already does, and shorter shared parameters (the browser's
 * `ref`, the terminal's waits). A new tool finds its room the same way before this number grows.
 */
export const CATALOG_BUDGET_BYTES = 40_000;

export interface SizeEntry {
  tools: number;
  bytes: number;
  /** Roughly bytes / 4, the usual rule of thumb for English text and JSON. */
  tokens: number;
}

export interface CatalogSize extends SizeEntry {
  byServer: Record<string, SizeEntry>;
}

/** The part of a tool definition a model reads. */
export function modelVisible(tool: Tool): { name: string; title?: string; description?: string; inputSchema: Tool["inputSchema"] } {
  return { name: tool.name, title: tool.title ?? tool.annotations?.title, description: tool.description, inputSchema: tool.inputSchema };
}

export function toolBytes(tool: Tool): number {
  return Buffer.byteLength(JSON.stringify(modelVisible(tool)));
}

/** Sizes in total and per server, a server being a published name's prefix (`file_read` → file). */
export function measureCatalog(tools: Tool[]): CatalogSize {
  const byServer: Record<string, SizeEntry> = {};
  let bytes = 0;
  for (const tool of tools) {
    const size = toolBytes(tool);
    const server = tool.name.includes("_") ? tool.name.slice(0, tool.name.indexOf("_")) : tool.name;
    const entry = (byServer[server] ??= { tools: 0, bytes: 0, tokens: 0 });
    entry.tools++;
    entry.bytes += size;
    entry.tokens = Math.round(entry.bytes / 4);
    bytes += size;
  }
  return { tools: tools.length, bytes, tokens: Math.round(bytes / 4), byServer };
}
