// What the hub forgives a 2026-07-28 child (./modern-link.ts), being exact toward its clients and
// liberal toward the servers behind it: a listen stream that never opens properly does not hold the
// child's start up, and a result without `resultType` is taken as the complete result it plainly is.
import type { Client } from "@modelcontextprotocol/client";
import { errorMessage } from "../../servers/lib/log.js";
import { isPlainObject } from "../protocol/jsonrpc.js";

type ListKind = "tools" | "prompts" | "resources";

export interface LenientEvents {
  listChanged(what: ListKind): void;
  warn(message: string, fields: Record<string, unknown>): void;
}

/**
 * Hears the child's list changes: unsolicited on a 2025-era connection ("auto"), on a
 * `subscriptions/listen` stream on a 2026 one. The stream is opened without waiting for it (the
 * SDK's own connect would wait up to 60 s for an acknowledgement a child may send wrong, as a line
 * of JSON instead of an event stream), and once it is open the lists are read again, so a change
 * made before it opened is not missed.
 */
export function hearListChanges(client: Client, events: LenientEvents): void {
  const kinds: ListKind[] = ["tools", "prompts", "resources"];
  for (const what of kinds) client.setNotificationHandler(`notifications/${what}/list_changed`, () => events.listChanged(what));
  if (client.getProtocolEra() !== "modern") return;
  const caps = client.getServerCapabilities() ?? {};
  const heard = kinds.filter((what) => caps[what]?.listChanged);
  if (!heard.length) return;
  const filter = Object.fromEntries(heard.map((what) => [`${what}ListChanged`, true]));
  client.listen(filter).then(
    () => heard.forEach((what) => events.listChanged(what)),
    (err: unknown) => events.warn("the server's list changes will not be heard: its subscriptions/listen stream did not open", { error: errorMessage(err) }),
  );
}

type OnMessage = (message: unknown, extra?: unknown) => void;

/**
 * Makes the transport hand on a result that lacks `resultType` as `"complete"` (the SDK refuses it
 * on a 2026 connection, so every such result would fail); `noticed` hears each one. Only replies to
 * the client's own requests (numeric ids), and only once the connection is known to be 2026-era:
 * 2025-era results never carry the field.
 */
export function takeBareResults(transport: object, modern: () => boolean, noticed: () => void): void {
  const ours = new WeakSet<OnMessage>();
  let current: OnMessage | undefined = (transport as { onmessage?: OnMessage }).onmessage;
  const wrap = (handler: OnMessage | undefined): OnMessage | undefined => {
    if (!handler || ours.has(handler)) return handler;
    const wrapped: OnMessage = (message, extra) => handler(completed(message, modern, noticed), extra);
    ours.add(wrapped);
    return wrapped;
  };
  current = wrap(current);
  // the SDK sets onmessage when it connects (and swaps it during version negotiation): every handler it sets is wrapped
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    enumerable: true,
    get: () => current,
    set: (handler: OnMessage | undefined) => (current = wrap(handler)),
  });
}

function completed(message: unknown, modern: () => boolean, noticed: () => void): unknown {
  if (!isPlainObject(message) || typeof message.id !== "number" || !isPlainObject(message.result)) return message;
  if ("resultType" in message.result || !modern()) return message;
  noticed();
  return { ...message, result: { ...message.result, resultType: "complete" } };
}
