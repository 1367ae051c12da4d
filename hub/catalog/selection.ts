// Which tools, resources and prompts one client session sees: the hub's configured default
// selection (global, or a tenant's), narrowed by the session's URL (`?servers=`, `?tools=`,
// `?catalog=search`) and fixed at initialize. A view is a stack of layers, each of which may
// only remove: a URL is checked against the layers below it, so it can narrow and never widen.
//
// Rules (also in docs/clients.md, "Choosing the tools of a session"):
// - `servers` keeps the named servers' tools, resources and prompts;
// - `tools` keeps tools matching a name or glob; `!glob` removes; hub_* tools are not affected by
//   `servers` or by positive patterns, only by an exclusion (`?tools=!hub_metrics`);
// - in search mode tools/list shows the hub's tools and what hub_find_tools has found so far, but
//   every tool of the selection may be called: search decides what is listed, selection what is allowed.
import type { CallToolResult, ServerNotification, Tool } from "@modelcontextprotocol/sdk/types.js";
import picomatch from "picomatch";
import type { Catalog } from "./catalog.js";
import { jsonRpcError } from "../protocol/jsonrpc.js";
import { describeSpec, hasSelectionParams, parseSelectionQuery, SelectionError, type CatalogMode, type SelectionSpec } from "../config/selection-spec.js";
import type { Logger } from "../../servers/lib/log.js";
import { FIND_TOOLS, findToolsListed, findToolsTool, type ToolSearch } from "./tool-search.js";

/** The owner name of the hub's own tools, as a server would be named. */
export const HUB = "hub";

/** What a view reads from the hub, resolved at each use: the catalog changes as servers come and go. */
export interface ViewContext {
  catalog: Pick<Catalog, "tools" | "suggestTools"> & { tool(name: string): { child: { name: string }; listed?: Tool } | undefined; search: ToolSearch };
  hubTools: () => Tool[];
  serverNames: () => string[];
}

/**
 * What a person's sign-in allows (their token's scopes, hub/http/oauth/): whole servers, and, with
 * `readOnly`, every server's tools marked read-only. A grant narrows like a URL, and adds up.
 */
export interface Grant {
  servers: ReadonlySet<string>;
  readOnly: boolean;
  /** What to ask for to be granted a server (the scope's name), for refusals. */
  ask(server: string): string;
}

/** What a sign-in lacks for a request: the scope to ask for, and the refusal in words. */
export interface ScopeShortfall {
  scope: string;
  message: string;
}

function shortfall(what: string, grant: Grant, server: string): ScopeShortfall {
  const scope = grant.ask(server);
  const granted = `${grant.servers.size ? [...grant.servers].join(", ") : "no server"}${grant.readOnly ? " and every server's read-only tools" : ""}`;
  return {
    scope,
    message: `${what} is outside what this sign-in allows: its token's scopes grant ${granted}. To use it, sign in again asking for the scope ${scope}.`,
  };
}

const sameGrant = (a: Grant | undefined, b: Grant | undefined) =>
  a === b ||
  (a !== undefined && b !== undefined && a.readOnly === b.readOnly && a.servers.size === b.servers.size && [...a.servers].every((s) => b.servers.has(s)));

interface Layer {
  source: "config" | "url" | "grant";
  spec: SelectionSpec;
  grant?: Grant;
  servers?: ReadonlySet<string>;
  include?: (name: string) => boolean;
  exclude?: (name: string) => boolean;
}

function makeLayer(source: Layer["source"], spec: SelectionSpec): Layer {
  const positive = (spec.tools ?? []).filter((p) => !p.startsWith("!"));
  const negative = (spec.tools ?? []).filter((p) => p.startsWith("!")).map((p) => p.slice(1));
  return {
    source,
    spec,
    servers: spec.servers ? new Set(spec.servers) : undefined,
    include: positive.length ? picomatch(positive) : undefined,
    exclude: negative.length ? picomatch(negative) : undefined,
  };
}

function layerAllows(layer: Layer, tool: string, server: string, readOnly: (tool: string) => boolean): boolean {
  if (layer.exclude?.(tool)) return false;
  if (server === HUB) return true;
  if (layer.grant) return layer.grant.servers.has(server) || (layer.grant.readOnly && readOnly(tool));
  if (layer.servers && !layer.servers.has(server)) return false;
  return !layer.include || layer.include(tool);
}

export class SessionView {
  /** Tools hub_find_tools has returned to this session: listed from then on in search mode. */
  readonly found = new Set<string>();

  constructor(
    readonly ctx: ViewContext,
    readonly layers: readonly Layer[] = [],
    readonly mode: CatalogMode = "full",
  ) {}

  /** The server a published tool belongs to (HUB for the hub's own), or undefined if there is no such tool. */
  serverOf(tool: string): string | undefined {
    const owner = this.ctx.catalog.tool(tool);
    if (owner) return owner.child.name;
    if (tool === FIND_TOOLS && this.mode === "search") return HUB;
    return this.ctx.hubTools().some((t) => t.name === tool) ? HUB : undefined;
  }

  allowsTool(tool: string): boolean {
    const server = this.serverOf(tool);
    return server !== undefined && this.layers.every((l) => layerAllows(l, tool, server, this.readOnly));
  }

  /** For resources and prompts, which only `servers` selects (and a grant: its servers, or reading any). */
  allowsServer(server: string): boolean {
    return this.layers.every((l) => (l.grant ? l.grant.servers.has(server) || l.grant.readOnly : !l.servers || l.servers.has(server)));
  }

  /** A tool its server marks as changing nothing (annotations.readOnlyHint). */
  private readonly readOnly = (tool: string): boolean => this.listed(tool)?.annotations?.readOnlyHint === true;

  /** The same selection within what a sign-in allows; unchanged without a grant (an API key, or a token with every scope). */
  within(grant: Grant | undefined): SessionView {
    if (!grant) return this;
    const view = new SessionView(this.ctx, [...this.layers, { source: "grant", spec: {}, grant }], this.mode);
    for (const tool of this.found) view.found.add(tool);
    return view;
  }

  /** The same selection within another sign-in's grant instead of this one's (a session whose person stepped up, or down); this view when the grant is the same. */
  regranted(grant: Grant | undefined): SessionView {
    const current = this.layers.find((l) => l.grant)?.grant;
    if (sameGrant(current, grant)) return this;
    const view = new SessionView(
      this.ctx,
      this.layers.filter((l) => !l.grant),
      this.mode,
    ).within(grant);
    for (const tool of this.found) view.found.add(tool);
    return view;
  }

  /** Every tool of the hub and its servers, whatever the selection (hub_find_tools aside). */
  /** A tool as listed, by name, whatever the selection: the hub's own or a server's. */
  listed(tool: string): Tool | undefined {
    return this.ctx.catalog.tool(tool)?.listed ?? this.ctx.hubTools().find((t) => t.name === tool);
  }

  private allTools(): Tool[] {
    return [...this.ctx.hubTools(), ...this.ctx.catalog.tools];
  }

  /** Every tool this session may call, the hub's first. */
  selectedTools(): Tool[] {
    const all = this.allTools();
    return (this.mode === "search" ? [findToolsListed, ...all] : all).filter((t) => this.allowsTool(t.name));
  }

  /** tools/list: the selection, or in search mode the hub's tools and what was found. */
  listTools(): Tool[] {
    const selected = this.selectedTools();
    if (this.mode === "full") return selected;
    return selected.filter((t) => this.serverOf(t.name) === HUB || this.found.has(t.name));
  }

  /** The server's instructions for this session: in search mode, how to find the tools not listed. */
  instructions(base: string): string {
    if (this.mode !== "search") return base;
    return `${base} Only the hub's own tools are listed at first: call ${FIND_TOOLS} with a task in a few words to find the others and add them to your list.`;
  }

  /**
   * A tool outside this sign-in's scopes alone (no other layer refuses it): the scope to ask for and
   * why, so the HTTP front can answer 403 insufficient_scope and the client step up. Undefined otherwise.
   */
  scopeForTool(tool: string): ScopeShortfall | undefined {
    const server = this.serverOf(tool);
    if (server === undefined) return undefined;
    const blocking = this.layers.filter((l) => !layerAllows(l, tool, server, this.readOnly));
    return blocking.length && blocking.every((l) => l.grant) ? shortfall(`Tool '${tool}'`, blocking[0].grant!, server) : undefined;
  }

  /** The same for a server's resources and prompts. */
  scopeForServer(server: string): ScopeShortfall | undefined {
    const blocking = this.layers.filter((l) => !(l.grant ? l.grant.servers.has(server) || l.grant.readOnly : !l.servers || l.servers.has(server)));
    return blocking.length && blocking.every((l) => l.grant) ? shortfall(`Server '${server}'`, blocking[0].grant!, server) : undefined;
  }

  /** A tool that exists but is outside the selection gets a reason and a way in; undefined when allowed or unknown. */
  refuseCall(tool: string): CallToolResult | undefined {
    const server = this.serverOf(tool);
    if (server === undefined) return undefined;
    const blocking = this.layers.find((l) => !layerAllows(l, tool, server, this.readOnly));
    if (!blocking) return undefined;
    if (blocking.grant) return { content: [{ type: "text", text: shortfall(`Tool '${tool}'`, blocking.grant, server).message }], isError: true };
    const how =
      blocking.source === "config"
        ? "The hub's configured selection excludes it, and a session URL can only narrow that; ask the hub's operator."
        : `It was left out by this session's URL (${describeSpec(blocking.spec)}). To use it, connect a new session whose URL selects it, e.g. ` +
          `${server === HUB ? "without the exclusion in ?tools=" : `?servers=${server} or ?tools=${tool}`}.`;
    // text only: the hub has no data of the tool's, and a client checks any structuredContent against its outputSchema
    return { content: [{ type: "text", text: `Tool '${tool}' exists but is not in this session's selection. ${how}` }], isError: true };
  }

  /** hub_find_tools, when this is a search-mode session; undefined for any other tool. */
  callFindTools(
    tool: string,
    args: unknown,
    call: { notify(notification: ServerNotification): Promise<void>; log: Logger; sessionless: boolean },
  ): Promise<CallToolResult> | undefined {
    if (tool !== FIND_TOOLS || this.mode !== "search" || !this.allowsTool(tool)) return undefined;
    return findToolsTool.call(args, {
      log: call.log,
      search: this.ctx.catalog.search,
      tools: this.allTools(),
      allows: (name) => this.allowsTool(name),
      // a sessionless caller has no list to grow, and whoever shares its implicit session no use for one
      sessionless: call.sessionless,
      found: async (names) => {
        const added = names.filter((n) => !this.found.has(n));
        for (const name of added) this.found.add(name);
        if (added.length) await call.notify({ method: "notifications/tools/list_changed" }).catch(() => undefined);
      },
    });
  }

  /** The same selection with one more layer, checked against this one so it can only narrow. */
  narrow(spec: SelectionSpec | undefined, source: Layer["source"]): SessionView {
    if (!spec) return new SessionView(this.ctx, this.layers, this.mode);
    if (source === "url") this.check(spec);
    const layers = spec.servers || spec.tools ? [...this.layers, makeLayer(source, spec)] : this.layers;
    const view = new SessionView(this.ctx, layers, spec.catalog ?? this.mode);
    if (source === "url" && view.mode === "search" && !view.allowsTool(FIND_TOOLS)) {
      throw new SelectionError(`?catalog=search needs ${FIND_TOOLS}, which this selection excludes; do not exclude it in ?tools=.`);
    }
    return view;
  }

  /** Refuse a URL naming a server or a pattern that selects nothing here (a typo, or an attempt to widen). */
  private check(spec: SelectionSpec): void {
    const known = this.ctx.serverNames();
    const base = this.layers.some((l) => l.source === "url") ? "this session's selection" : "the hub's configured selection";
    for (const server of spec.servers ?? []) {
      if (!known.includes(server)) {
        throw new SelectionError(`Unknown server '${server}' in ?servers=. This hub's servers: ${known.join(", ") || "none"}.`);
      }
      if (!this.allowsServer(server)) {
        throw new SelectionError(`Server '${server}' is outside ${base}, which a URL can narrow but not widen.`);
      }
    }
    const everything = new SessionView(this.ctx, [], "search").selectedTools().map((t) => t.name);
    // hub_find_tools counts as selectable here whatever the mode, so excluding it is a choice, not a typo
    const mine = new SessionView(this.ctx, this.layers, "search").selectedTools().map((t) => t.name);
    const servers = spec.servers ? new Set(spec.servers) : undefined;
    for (const pattern of spec.tools ?? []) {
      const negated = pattern.startsWith("!");
      const matcher = picomatch(negated ? pattern.slice(1) : pattern);
      const match = (tool: string) => matcher(tool);
      const inScope = mine.filter((t) => negated || !servers || this.serverOf(t) === HUB || servers.has(this.serverOf(t)!));
      if (inScope.some(match)) continue;
      if (mine.some(match)) throw new SelectionError(`?tools= pattern '${pattern}' matches no tool of the servers in ?servers=${spec.servers!.join(",")}.`);
      if (everything.some(match)) {
        throw new SelectionError(`?tools= pattern '${pattern}' matches only tools outside ${base}, which a URL can narrow but not widen.`);
      }
      const near = negated || /[*?[]/.test(pattern) ? [] : this.ctx.catalog.suggestTools(pattern);
      throw new SelectionError(
        `?tools= pattern '${pattern}' matches no tool.${near.length ? ` Did you mean: ${near.join(", ")}?` : " See tools/list of a session without ?tools= for the names."}`,
      );
    }
  }
}

/**
 * The view for a request URL on top of `base` (the configured defaults): the base itself when the
 * URL selects nothing, else the narrowed view, or an HTTP 400 carrying a JSON-RPC error that says
 * what was wrong.
 */
export function viewForUrl(base: SessionView, url: string, id?: string | number | null): SessionView | Response {
  try {
    return base.narrow(parseSelectionQuery(new URL(url, "http://localhost").searchParams), "url");
  } catch (err) {
    if (!(err instanceof SelectionError)) throw err;
    return jsonRpcError(400, -32602, `Invalid tool selection: ${err.message}`, { id: id ?? null });
  }
}

/** Whether a request's URL carries selection parameters (plain JSON requests may, per request). */
export function urlSelects(url: string): boolean {
  // a URL without a query selects nothing: parsing one took 2 % of a 2026 call's hub CPU (bench/profile.ts)
  return url.includes("?") && hasSelectionParams(new URL(url, "http://localhost").searchParams);
}
