// Plain HTTP clients (curl, a 20-line script) POST JSON-RPC with only Content-Type:
// application/json. The SDK transport insists on Accept listing both JSON and SSE, so the hub
// widens Accept for it and, when the client cannot read SSE, turns the SSE reply back into the
// JSON-RPC response(s) it carries.
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { RATE_LIMITED_CODE } from "../../protocol/jsonrpc.js";
import { acceptsMediaType, mediaTypeOf } from "../../../servers/lib/media-type.js";

export function acceptsSse(req: Request): boolean {
  return acceptsMediaType(req.headers.get("accept"), "text/event-stream");
}

// what SDK clients send; the transport looks for both names in the header, in this case
const FULL_ACCEPT = "application/json, text/event-stream";

/** The request with an Accept header the SDK transport takes (what the client reads is decided on its own header, acceptsSse). */
export function withFullAccept(req: Request, body?: string): Request {
  if (req.headers.get("accept") === FULL_ACCEPT) return req;
  const headers = new Headers(req.headers);
  headers.set("accept", FULL_ACCEPT);
  return new Request(req.url, { method: req.method, headers, body: body ?? (req.method === "POST" ? req.body : undefined), duplex: "half" } as RequestInit);
}

function isResponse(message: JSONRPCMessage): boolean {
  return "id" in message && ("result" in message || "error" in message);
}

function parseSse(text: string): JSONRPCMessage[] {
  const messages: JSONRPCMessage[] = [];
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).replace(/^ /, ""))
      .join("\n");
    if (!data.trim()) continue;
    try {
      messages.push(JSON.parse(data));
    } catch {
      // not JSON-RPC: skip
    }
  }
  return messages;
}

/** Collect the JSON-RPC responses of an SSE reply into a JSON reply; batch requests get an array. */
export async function sseToJson(res: Response, batch: boolean): Promise<Response> {
  if (mediaTypeOf(res.headers.get("content-type")) !== "text/event-stream") return withRateLimitStatus(res);
  const responses = parseSse(await res.text()).filter(isResponse);
  const headers = new Headers(res.headers);
  headers.set("content-type", "application/json");
  headers.delete("content-length");
  if (responses.length === 0) return new Response(null, { status: 202, headers });
  return withRateLimitStatus(new Response(JSON.stringify(batch ? responses : responses[0]), { status: res.status, headers }));
}

/** How long to wait when a reply (or a batch of one) is only a rate-limit error, else undefined. */
export function rateLimitRetryMs(reply: unknown): number | undefined {
  const single = (Array.isArray(reply) ? (reply.length === 1 ? reply[0] : undefined) : reply) as
    { error?: { code?: unknown; data?: { retryAfterMs?: unknown } } } | undefined;
  if (single?.error?.code !== RATE_LIMITED_CODE) return undefined;
  return Number(single.error.data?.retryAfterMs) || 1000;
}

/** Retry-After in whole seconds, as HTTP wants it. */
export const retryAfterSeconds = (ms: number) => String(Math.ceil(ms / 1000));

/** A plain-JSON reply that is only a rate-limit error becomes HTTP 429 with Retry-After. */
async function withRateLimitStatus(res: Response): Promise<Response> {
  if (mediaTypeOf(res.headers.get("content-type")) !== "application/json" || res.status !== 200) return res;
  const text = await res.text();
  let retryAfterMs: number | undefined;
  try {
    retryAfterMs = rateLimitRetryMs(JSON.parse(text));
  } catch {
    // leave unparseable bodies alone
  }
  const headers = new Headers(res.headers);
  if (retryAfterMs === undefined) return new Response(text, { status: res.status, headers });
  headers.set("retry-after", retryAfterSeconds(retryAfterMs));
  return new Response(text, { status: 429, headers });
}
