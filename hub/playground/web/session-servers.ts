// Which of the hub's servers this page's session has. GET / reports every server of the tenant;
// a session opened with ?servers= or ?tools= (or narrowed by the config's defaults) has fewer, and
// the header, the servers table and the sidebar show those, as the hub's own instructions for the
// session name them (hub/catalog/instructions.ts: allowed, and at least one of their tools selected).
import type { Tool } from "@modelcontextprotocol/client";
import { selectionQuery } from "./catalog-picker.js";
import type { ServerStatus } from "./connection.js";

/** The server a tool belongs to, by its prefix; "hub" for the hub's own tools. */
export function serverOf(toolName: string, servers: readonly ServerStatus[]): string {
  // the longest matching prefix wins, so "db" never claims "db_admin_*" of a "db_admin" server
  const match = servers.filter((s) => s.prefix && toolName.startsWith(`${s.prefix}_`)).sort((a, b) => b.prefix.length - a.prefix.length)[0];
  if (match) return match.name;
  // the hub's own tools before a server without a prefix, which would otherwise claim them too
  if (toolName.startsWith("hub_")) return "hub";
  return servers.find((s) => !s.prefix)?.name ?? "other";
}

/** The servers the page's URL names (?servers=a,b), or undefined when it names none. */
function namedServers(search: string): Set<string> | undefined {
  const names = new URLSearchParams(selectionQuery(search))
    .getAll("servers")
    .flatMap((v) => v.split(","))
    .filter(Boolean);
  return names.length ? new Set(names) : undefined;
}

/**
 * The servers of the session: those its selection allows, with a tool in its list. In search mode the list starts with the
 * hub's tools alone, and every allowed server's tools can be found, so every allowed server counts.
 */
export function sessionServers(servers: readonly ServerStatus[], tools: readonly Tool[], search: string = location.search): ServerStatus[] {
  const named = namedServers(search);
  const allowed = servers.filter((s) => !named || named.has(s.name));
  if (!selectionQuery(search) || new URLSearchParams(search).get("catalog") === "search") return allowed;
  const owners = new Set(tools.map((t) => serverOf(t.name, servers)));
  // a server without tools (failed before it listed any) is the session's when ?servers= names it; ?tools= cannot select it
  const byTools = new URLSearchParams(search).has("tools");
  return allowed.filter((s) => owners.has(s.name) || (s.tools === 0 && !byTools));
}

/** How many of the session's tools belong to each server. */
export function toolCounts(servers: readonly ServerStatus[], tools: readonly Tool[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const tool of tools) {
    const owner = serverOf(tool.name, servers);
    counts.set(owner, (counts.get(owner) ?? 0) + 1);
  }
  return counts;
}
