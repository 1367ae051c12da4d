// What a selection is made of, before it meets a catalog: the config keys (`servers`, `tools`,
// `catalog`, globally or per tenant) and the same three as URL query parameters. Parsing only;
// hub/catalog/selection.ts applies a spec to the tools a hub actually has.
import { z } from "zod";

export type CatalogMode = "full" | "search";

export interface SelectionSpec {
  /** Server names (config keys of mcpServers): only their tools, resources and prompts. */
  servers?: string[];
  /** Tool names or globs; `!pattern` excludes (the only way to drop a hub_* tool). */
  tools?: string[];
  catalog?: CatalogMode;
}

export const SELECTION_PARAMS = ["servers", "tools", "catalog"] as const;
const MAX_ENTRIES = 100;
const SERVER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
// a published tool name (^[a-zA-Z0-9_-]{1,64}$) with the globs * ? [ ] and an optional leading !
const TOOL_PATTERN = /^!?[A-Za-z0-9_*?[\]-]{1,100}$/;

const serverList = z
  .array(z.string().regex(SERVER_NAME, "a server name as in mcpServers (letters, digits, . _ -)"))
  .min(1, "name at least one server, or leave the key out for all")
  .max(MAX_ENTRIES);
const toolList = z
  .array(z.string().regex(TOOL_PATTERN, "a tool name or glob (letters, digits, _ -, * ? [ ]), ! in front to exclude"))
  .min(1, "name at least one tool or pattern, or leave the key out for all")
  .max(MAX_ENTRIES);

/**
 * The selection keys of a config object. Spread into the top level of the config file and into
 * each tenant's entry (`tenants.<name>`): `z.object({ ...selectionConfigShape, apiKey: ... })`.
 */
export const selectionConfigShape = {
  servers: serverList.optional(),
  tools: toolList.optional(),
  catalog: z.enum(["full", "search"]).optional(),
};

export const selectionSpecSchema = z.object(selectionConfigShape).strict();

/** The selection keys of a parsed config object (global or a tenant's), or undefined if none is set. */
export function selectionOf(config: SelectionSpec | undefined): SelectionSpec | undefined {
  if (!config) return undefined;
  const { servers, tools, catalog } = config;
  return servers || tools || catalog ? { ...(servers && { servers }), ...(tools && { tools }), ...(catalog && { catalog }) } : undefined;
}

/** A tenant's own keys win over the global ones, key by key (a tenant without `tools` keeps the global `tools`). */
export function mergeDefaults(global: SelectionSpec | undefined, tenant: SelectionSpec | undefined): SelectionSpec | undefined {
  return selectionOf({ ...global, ...selectionOf(tenant) });
}

/** Config-time check of what can be checked before any server runs: the server names. */
export function unknownDefaultServers(spec: SelectionSpec | undefined, serverNames: string[]): string | undefined {
  const unknown = (spec?.servers ?? []).filter((s) => !serverNames.includes(s));
  if (!unknown.length) return undefined;
  return `"servers" names ${unknown.map((s) => `'${s}'`).join(", ")}, not in mcpServers (${serverNames.join(", ") || "none"}).`;
}

export class SelectionError extends Error {}

export function hasSelectionParams(params: URLSearchParams): boolean {
  return SELECTION_PARAMS.some((p) => params.has(p));
}

/** `?servers=a,b&tools=x_*,!y&catalog=search` → a spec; repeated parameters add up. */
export function parseSelectionQuery(params: URLSearchParams): SelectionSpec | undefined {
  if (!hasSelectionParams(params)) return undefined;
  const listOf = (key: "servers" | "tools") => {
    if (!params.has(key)) return undefined;
    return params
      .getAll(key)
      .flatMap((v) => v.split(","))
      .map((v) => v.trim())
      .filter(Boolean);
  };
  const catalogs = params.getAll("catalog");
  if (catalogs.length > 1) throw new SelectionError(`?catalog= is given ${catalogs.length} times; give it once, as full or search.`);
  const candidate = { servers: listOf("servers"), tools: listOf("tools"), catalog: catalogs[0] };
  const parsed = selectionSpecSchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = String(issue.path[0]);
    const index = issue.path[1];
    const value = typeof index === "number" ? ` '${(candidate[key as "servers" | "tools"] ?? [])[index]}'` : "";
    const allowed = key === "catalog" ? `: full or search, not '${catalogs[0]}'` : `${value}: ${issue.message}`;
    throw new SelectionError(`Bad ?${key}=${allowed}.`);
  }
  return selectionOf(parsed.data);
}

/** The spec as it would appear in a URL, for messages: "servers=file,terminal&tools=file_*". */
export function describeSpec(spec: SelectionSpec): string {
  const parts: string[] = [];
  if (spec.servers) parts.push(`servers=${spec.servers.join(",")}`);
  if (spec.tools) parts.push(`tools=${spec.tools.join(",")}`);
  if (spec.catalog) parts.push(`catalog=${spec.catalog}`);
  return parts.join("&");
}
