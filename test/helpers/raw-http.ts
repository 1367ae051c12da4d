// Raw HTTP against the hub, for what the SDK client hides: headers, content types, SSE events.
import type { TestHub } from "./hub.js";

export const json = { "Content-Type": "application/json" };
export const both = { ...json, Accept: "application/json, text/event-stream" };

export async function post(hub: TestHub, body: unknown, headers: Record<string, string> = json) {
  const res = await fetch(hub.url, { method: "POST", headers, body: typeof body === "string" ? body : JSON.stringify(body) });
  const text = await res.text();
  const isJson = (res.headers.get("content-type") ?? "").includes("application/json");
  return { res, text, body: text && isJson ? JSON.parse(text) : undefined };
}

export async function initialize(hub: TestHub, protocolVersion = "2025-11-25", capabilities: Record<string, unknown> = {}) {
  const { res } = await post(
    hub,
    { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion, capabilities, clientInfo: { name: "raw", version: "1" } } },
    both,
  );
  const sessionId = res.headers.get("mcp-session-id")!;
  await fetch(hub.url, {
    method: "POST",
    headers: { ...both, "mcp-session-id": sessionId, "mcp-protocol-version": protocolVersion },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  return sessionId;
}

/** One SSE event's fields: its id, its event name, and its data lines joined. */
function parseEvent(raw: string): { id?: string; event?: string; data: string } {
  const field = (name: string) => raw.match(new RegExp(`^${name}: ?(.*)$`, "m"))?.[1];
  const data = raw
    .split("\n")
    .filter((l) => l.startsWith("data:"))
    .map((l) => l.slice(5).trim())
    .join("\n");
  return { id: field("id"), event: field("event"), data };
}

/** Read SSE events from a response until `until` says stop; returns them as {id, data}. */
export async function readEvents(res: Response, until: (events: Array<{ id?: string; data: string }>) => boolean) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: Array<{ id?: string; data: string }> = [];
  let buffer = "";
  while (!until(events)) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const { id, data } = parseEvent(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (data) events.push({ id, data });
    }
  }
  await reader.cancel().catch(() => undefined);
  return events;
}

/** An SSE reply read event by event while the test goes on talking to the hub (readEvents reads to a condition, then stops). */
export function eventStream(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  return {
    /** The next event, or undefined when the stream ended. */
    async next(): Promise<{ event?: string; data: string } | undefined> {
      for (;;) {
        const cut = buffer.indexOf("\n\n");
        if (cut >= 0) {
          const { event, data } = parseEvent(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
          if (data) return { event, data };
          continue;
        }
        const { value, done } = await reader.read();
        if (done) return undefined;
        buffer += decoder.decode(value, { stream: true });
      }
    },
    close: () => reader.cancel().catch(() => undefined),
  };
}
