// Which request a person's sign-in is too narrow for (hub/catalog/selection.ts decides, per tool
// or server): read off a single JSON-RPC request before anything answers it, so the HTTP front
// can refuse it with 403 insufficient_scope, the answer a client steps up on (the MCP
// authorization spec), instead of an MCP error inside a 200.
import { isPlainObject } from "../protocol/jsonrpc.js";
import type { ScopeShortfall, SessionView } from "../catalog/selection.js";
import type { ServedTenant } from "../tenants/served-tenant.js";
import { ownerOf } from "./resources.js";

/** The scope `body` (one request; a batch is answered message by message, as MCP errors) needs beyond `view`'s grant, if any. */
export function scopeShortfall(tenant: ServedTenant, view: SessionView, body: unknown): ScopeShortfall | undefined {
  if (!isPlainObject(body) || !isPlainObject(body.params)) return undefined;
  const { name, uri } = body.params;
  if (body.method === "tools/call" && typeof name === "string") return view.scopeForTool(name);
  if (body.method === "prompts/get" && typeof name === "string") {
    const owner = tenant.catalog.prompt(name);
    return owner ? view.scopeForServer(owner.child.name) : undefined;
  }
  if (body.method === "resources/read" && typeof uri === "string") {
    const owner = ownerOf(tenant, uri);
    return owner ? view.scopeForServer(owner.name) : undefined;
  }
  return undefined;
}
