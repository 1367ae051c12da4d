// HTTP responses carrying a JSON-RPC error, for faults found before a request reaches an SDK server.
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
