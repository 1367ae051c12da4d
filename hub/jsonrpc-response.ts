// HTTP responses carrying a JSON-RPC error, for faults found before a request reaches an SDK server.
import { McpError } from "@modelcontextprotocol/sdk/types.js";
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  options: { data?: unknown; id?: string | number | null; headers?: Record<string, string> } = {},
): Response {
  const body = { jsonrpc: "2.0", id: options.id ?? null, error: { code, message, ...(options.data !== undefined ? { data: options.data } : {}) } };
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json", ...options.headers },
  });
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
  for (const message of Array.isArray(body) ? body : [body]) {
    if (typeof message !== "object" || message === null || !("id" in message)) continue;
    const id = (message as { id: unknown }).id;
    if (id === null || validId(id) || !("method" in message)) continue;
    return {
      ok: false,
      response: jsonRpcError(400, -32600, `Invalid Request: an id must be a string or an integer between -(2^53-1) and 2^53-1; ${JSON.stringify(id)} is not. Use a string id or a smaller integer.`, {
        id: typeof id === "number" ? id : null,
      }),
    };
  }
  return { ok: true, body, text };
}

/** The JSON-RPC error code of a request refused by a method rate limit (plain JSON clients get HTTP 429). */
export const RATE_LIMITED_CODE = -32029;
