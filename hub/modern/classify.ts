// Which era a sessionless POST on /mcp belongs to, decided with the SDK's own classifier
// (classifyInboundRequest): the body-primary rules of the 2026-07-28 revision, its envelope
// checked by zod. Most of a classification's cost is that check of `_meta`, and a client sends the
// same envelope on every request: an envelope the classifier once passed is remembered, so a
// request carrying the same JSON again, and nothing the classifier would judge otherwise, gets the
// classifier's answer without asking it. Anything else (a new envelope, one with a progress
// token, initialize, a notification, a batch, a header that disagrees) is classified by the SDK.
import { classifyInboundRequest, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY } from "@modelcontextprotocol/server";
import { isPlainObject } from "../protocol/jsonrpc.js";
import type { ModernRoute } from "./direct.js";

/** The 2025-era versions a client may name in MCP-Protocol-Version; any other value is the modern path's to judge. */
const LEGACY_VERSIONS = new Set(["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"]);

type RequestRoute = Extract<ModernRoute, { kind: "modern"; messageKind: "request" }>;

/** Clients whose envelopes are remembered at most: a flood of distinct ones only empties the memory. */
const MAX_CLIENTS = 256;
/** Envelopes remembered per client (its revision, name and version): a client has one or a few. */
const ENVELOPES_PER_CLIENT = 4;
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

type Passed = { envelope: Record<string, unknown>; classification: RequestRoute["classification"] };

/**
 * Envelopes the classifier passed in a request it routed modern, with the classification each gave,
 * by the client they name. Found again by comparing values, not by their JSON: serializing every
 * request's envelope to look it up took 1.0-1.3 us, comparing it 0.4.
 */
const passed = new Map<string, Passed[]>();

/** Which client an envelope names (its revision, name and version): where to look for it among those passed. */
function clientOf(envelope: Record<string, unknown>): string {
  const version = envelope[PROTOCOL_VERSION_META_KEY];
  const info = envelope[CLIENT_INFO_META_KEY];
  const name = isPlainObject(info) && typeof info.name === "string" ? info.name : "";
  const release = isPlainObject(info) && typeof info.version === "string" ? info.version : "";
  return `${typeof version === "string" ? version : ""}\0${name}\0${release}`;
}

/**
 * Whether two JSON values serialize the same: the same keys in the same order, the same items,
 * equal numbers, strings and literals (what a map keyed by their JSON found equal).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const keys = Object.keys(a);
  const others = Object.keys(b);
  if (keys.length !== others.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (key !== others[i] || !sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

function remember(envelope: Record<string, unknown>, classification: RequestRoute["classification"]): void {
  const json = JSON.stringify(envelope);
  if (json.length > MAX_ENVELOPE_CHARS) return;
  const client = clientOf(envelope);
  let kept = passed.get(client);
  if (!kept) {
    if (passed.size >= MAX_CLIENTS) passed.clear();
    passed.set(client, (kept = []));
  }
  // a copy: the request's own envelope goes on with it, and what is kept must stay as it was passed
  kept.push({ envelope: JSON.parse(json) as Record<string, unknown>, classification });
  if (kept.length > ENVELOPES_PER_CLIENT) kept.shift();
}

/**
 * The classifier's route for a request it has already passed the envelope of, or undefined when
 * only the classifier may say: a JSON-RPC request (exactly its four keys, an integer or string id,
 * not initialize) whose envelope is one it passed, whose version header, when sent, names the
 * envelope's version and whose Mcp-Method header, when sent, its method.
 */
function remembered(req: Request, body: unknown): { route?: RequestRoute; envelope?: Record<string, unknown> } {
  if (req.method !== "POST" || !isPlainObject(body) || body.jsonrpc !== "2.0" || typeof body.method !== "string" || body.method === "initialize") return {};
  if (!(typeof body.id === "string" || Number.isSafeInteger(body.id)) || !onlyRequestKeys(body)) return {};
  const envelope = isPlainObject(body.params) ? body.params._meta : undefined;
  if (!isPlainObject(envelope)) return {};
  const classification = passed.get(clientOf(envelope))?.find((kept) => sameJson(kept.envelope, envelope))?.classification;
  if (!classification) return { envelope };
  const version = stripOws(req.headers.get("mcp-protocol-version"));
  const method = stripOws(req.headers.get("mcp-method"));
  if ((version !== undefined && version !== envelope[PROTOCOL_VERSION_META_KEY]) || (method !== undefined && method !== body.method)) return {};
  return { route: { kind: "modern", messageKind: "request", message: body as RequestRoute["message"], classification } };
}

function onlyRequestKeys(body: Record<string, unknown>): boolean {
  for (const key of Object.keys(body)) if (!REQUEST_KEYS.has(key)) return false;
  return true;
}

/**
 * The SDK's own routing, on the body already parsed: its classifier with the request's standard
 * headers, exactly what isLegacyRequest runs, kept for the direct path so the body is classified
 * once (or the classifier's remembered answer for the same envelope, above). Undefined for 2025
 * traffic; a malformed claim is the modern path's to refuse.
 */
export function modernRoute(req: Request, body: unknown): ModernRoute | undefined {
  const { route: known, envelope } = remembered(req, body);
  if (known) return known;
  const route = classifyInboundRequest({
    httpMethod: req.method.toUpperCase(),
    protocolVersionHeader: req.headers.get("mcp-protocol-version") ?? undefined,
    mcpMethodHeader: req.headers.get("mcp-method") ?? undefined,
    mcpNameHeader: req.headers.get("mcp-name") ?? undefined,
    body,
  });
  if (envelope !== undefined && route.kind === "modern" && route.messageKind === "request") remember(envelope, route.classification);
  return route.kind === "legacy" ? undefined : route;
}
