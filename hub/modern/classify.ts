// Which era a sessionless POST on /mcp belongs to, decided with the SDK's own classifier
// (classifyInboundRequest): the body-primary rules of the 2026-07-28 revision, its envelope
// checked by zod. Most of a classification's cost is that check of `_meta`, and a client sends the
// same envelope on every request: an envelope the classifier once passed is remembered by its
// JSON, so a request carrying it again, and nothing the classifier would judge otherwise, gets the
// classifier's answer without asking it. Anything else (a new envelope, one with a progress
// token, initialize, a notification, a batch, a header that disagrees) is classified by the SDK.
import { classifyInboundRequest, PROTOCOL_VERSION_META_KEY } from "@modelcontextprotocol/server";
import { isPlainObject } from "../protocol/jsonrpc.js";
import type { ModernRoute } from "./direct.js";

/** The 2025-era versions a client may name in MCP-Protocol-Version; any other value is the modern path's to judge. */
const LEGACY_VERSIONS = new Set(["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"]);

type RequestRoute = Extract<ModernRoute, { kind: "modern"; messageKind: "request" }>;

/** Envelopes remembered at most: a client has one or a few; a flood of distinct ones only empties the memory. */
const MAX_ENVELOPES = 256;
/** A longer envelope is classified every time rather than kept. */
const MAX_ENVELOPE_CHARS = 4096;
const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);

const claims = (message: unknown) => {
  const meta = (message as { params?: { _meta?: unknown } } | null)?.params?._meta;
  return isPlainObject(meta) && PROTOCOL_VERSION_META_KEY in meta;
};

/**
 * Whether a sessionless POST might be the modern path's: its body claims the envelope, or its
 * version header names no 2025 revision. Synchronous and a property lookup or two, so 2025
 * traffic pays nothing more; only a yes asks the classifier (modernRoute).
 */
export function mayBeModern(req: Request, body: unknown): boolean {
  const header = req.headers.get("mcp-protocol-version");
  return (Array.isArray(body) ? body.some(claims) : claims(body)) || (header !== null && !LEGACY_VERSIONS.has(header));
}

/** HTTP optional whitespace around a header value, as the classifier strips it. */
const stripOws = (value: string | null) => (value === null ? undefined : value.replace(/^[ \t]+|[ \t]+$/g, ""));

/** Envelopes the classifier passed in a request it routed modern, by their JSON: the classification each gave. */
const passed = new Map<string, RequestRoute["classification"]>();

/**
 * The classifier's route for a request it has already passed the envelope of, or undefined when
 * only the classifier may say: a JSON-RPC request (exactly its four keys, an integer or string id,
 * not initialize) whose envelope is one it passed, whose version header, when sent, names the
 * envelope's version and whose Mcp-Method header, when sent, its method.
 */
function remembered(req: Request, body: unknown): { route?: RequestRoute; key?: string } {
  if (req.method !== "POST" || !isPlainObject(body) || body.jsonrpc !== "2.0" || typeof body.method !== "string" || body.method === "initialize") return {};
  if (!(typeof body.id === "string" || Number.isSafeInteger(body.id)) || !Object.keys(body).every((k) => REQUEST_KEYS.has(k))) return {};
  const meta = isPlainObject(body.params) ? body.params._meta : undefined;
  if (!isPlainObject(meta)) return {};
  const key = JSON.stringify(meta);
  if (key.length > MAX_ENVELOPE_CHARS) return {};
  const classification = passed.get(key);
  if (!classification) return { key };
  const version = stripOws(req.headers.get("mcp-protocol-version"));
  const method = stripOws(req.headers.get("mcp-method"));
  if ((version !== undefined && version !== meta[PROTOCOL_VERSION_META_KEY]) || (method !== undefined && method !== body.method)) return {};
  return { route: { kind: "modern", messageKind: "request", message: body as RequestRoute["message"], classification } };
}

/**
 * The SDK's own routing, on the body already parsed: its classifier with the request's standard
 * headers, exactly what isLegacyRequest runs, kept for the direct path so the body is classified
 * once (or the classifier's remembered answer for the same envelope, above). Undefined for 2025
 * traffic; a malformed claim is the modern path's to refuse.
 */
export function modernRoute(req: Request, body: unknown): ModernRoute | undefined {
  const { route: known, key } = remembered(req, body);
  if (known) return known;
  const route = classifyInboundRequest({
    httpMethod: req.method.toUpperCase(),
    protocolVersionHeader: req.headers.get("mcp-protocol-version") ?? undefined,
    mcpMethodHeader: req.headers.get("mcp-method") ?? undefined,
    mcpNameHeader: req.headers.get("mcp-name") ?? undefined,
    body,
  });
  if (key !== undefined && route.kind === "modern" && route.messageKind === "request") {
    if (passed.size >= MAX_ENVELOPES) passed.clear();
    passed.set(key, route.classification);
  }
  return route.kind === "legacy" ? undefined : route;
}
