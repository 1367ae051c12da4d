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
