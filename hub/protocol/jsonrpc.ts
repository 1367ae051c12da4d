// HTTP responses carrying a JSON-RPC reply the hub gives itself: errors for faults found before a
// request reaches an SDK server, results for requests it answers without one.
import { McpError } from "@modelcontextprotocol/sdk/types.js";
/** A JSON object (not null, not an array): what params, _meta and arguments must be. */
export const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

const jsonResponse = (status: number, body: object, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });

export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  options: { data?: unknown; id?: string | number | null; headers?: Record<string, string> } = {},
): Response {
  const body = { jsonrpc: "2.0", id: options.id ?? null, error: { code, message, ...(options.data !== undefined ? { data: options.data } : {}) } };
  return jsonResponse(status, body, options.headers);
}

/** The JSON-RPC success reply to request `id`, as a message: the body of jsonRpcResult, or an SSE event. */
export const resultMessage = (id: string | number, result: object) => ({ jsonrpc: "2.0" as const, id, result });

/** HTTP 200 carrying the JSON-RPC result of request `id`. */
export function jsonRpcResult(id: string | number, result: object, options: { headers?: Record<string, string> } = {}): Response {
  return jsonResponse(200, resultMessage(id, result), options.headers);
}

/**
 * An McpError whose message is only the message: the SDK's constructor prefixes "MCP error N:",
 * which goes out on the wire and which every SDK client then prefixes again.
 */
export function protocolError(code: number, message: string, data?: unknown): McpError {
  const error = new McpError(code, message, data);
  error.message = message;
  return error;
}

export function withoutCodePrefix(message: string): string {
  return message.replace(/^(MCP error -?\d+: )+/, "");
}

export type ParsedBody = { ok: true; body: unknown; text: string } | { ok: false; response: Response };

// "__proto__" as a key would set the prototype of the object a validator builds from it
const dropProto = (key: string, value: unknown) => (key === "__proto__" ? undefined : value);

/** A request id the SDK (and MCP) can carry: a string or an integer JavaScript holds exactly. */
const validId = (id: unknown) => typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id));

const shown = (value: unknown) => (value === undefined ? "undefined" : JSON.stringify(value).slice(0, 60));

/**
 * What makes valid JSON not a JSON-RPC message, naming the field: the SDK would answer it with
 * -32700 "Parse error: Invalid JSON-RPC message", which blames the JSON and names nothing.
 */
function shapeFault(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return `a message must be a JSON object, not ${shown(message)}.`;
  const m = message as Record<string, unknown>;
  if (!("jsonrpc" in m)) return `the "jsonrpc" field is missing; every message carries "jsonrpc": "2.0".`;
  if (m.jsonrpc !== "2.0") return `"jsonrpc" must be "2.0", not ${shown(m.jsonrpc)}.`;
  if ("method" in m) {
    // a wrong "params" is left to the method's own check, which names the part (-32602)
    return typeof m.method === "string" ? undefined : `"method" must be a string (e.g. "tools/list"), not ${shown(m.method)}.`;
  }
  if ("result" in m || "error" in m) return undefined;
  return `the "method" field is missing: a request names its method ("method": "tools/list"); a response carries "result" or "error".`;
}

function invalidRequest(fault: string, message?: unknown): Response {
  const id = (message as { id?: unknown } | undefined)?.id;
  return jsonRpcError(400, -32600, `Invalid Request: ${fault}`, { id: validId(id) ? (id as string | number) : null });
}

/**
 * Parse a JSON-RPC body, answering at once what would otherwise get no answer at all: invalid
 * JSON, and requests whose id the SDK cannot carry (1.5, 1e300, 2^64), which it would drop.
 */
export function parseJsonRpc(text: string): ParsedBody {
  let body: unknown;
  try {
    body = text.includes('"__proto__"') ? JSON.parse(text, dropProto) : JSON.parse(text);
  } catch (err) {
    return { ok: false, response: jsonRpcError(400, -32700, `Parse error: the request body is not valid JSON (${(err as Error).message}).`) };
  }
  if (Array.isArray(body) && body.length === 0) return { ok: false, response: invalidRequest("the batch is empty; send one message, or an array of them.") };
  for (const message of Array.isArray(body) ? body : [body]) {
    const fault = shapeFault(message);
    if (fault) return { ok: false, response: invalidRequest(fault, message) };
    if (!("id" in (message as object))) continue;
    const id = (message as { id: unknown }).id;
    if (id === null || validId(id) || !("method" in (message as object))) continue;
    return {
      ok: false,
      response: jsonRpcError(
        400,
        -32600,
        `Invalid Request: an id must be a string or an integer between -(2^53-1) and 2^53-1; ${JSON.stringify(id)} is not. Use a string id or a ` +
          `smaller integer.`,
        {
          id: typeof id === "number" ? id : null,
        },
      ),
    };
  }
  return { ok: true, body, text };
}

/** The JSON-RPC error code of a request refused by a method rate limit (plain JSON clients get HTTP 429). */
export const RATE_LIMITED_CODE = -32029;
