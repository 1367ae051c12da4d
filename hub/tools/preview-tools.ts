// hub_preview and hub_end_preview: a URL under the hub's own address for an app the caller's
// processes serve on a port (hub/previews/), and its end; and the previews hub_sessions lists.
import { z } from "zod";
import { defineTool, reply } from "../../servers/lib/tool.js";
import type { OpenPreview } from "../previews/previews.js";
import { formatRange } from "../config/network.js";
import type { ClientSession } from "../sessions/registry.js";
import type { SessionServices } from "../sessions/services.js";
import { sessionLabel } from "../observability/session-label.js";
import type { HubToolCall } from "../sessions/tool-calls.js";

type Context = HubToolCall & { hub: SessionServices };

const previewShape = {
  port: z.number(),
  url: z.string().describe("Opens the app in a plain browser: /preview/<token>/ under the hub's address"),
  subdomainUrl: z.string().optional().describe("<port>-<token>.<domain>, when the hub has a preview domain: the app at its own origin"),
  createdAt: z.string(),
  expiresAt: z.string(),
  session: z.string().optional().describe("A digest of the session that opened it; the preview ends with that session"),
};

/** A preview as hub_sessions lists it (no token: the URL holds it). */
export const previewEntry = z.object(previewShape);

export function previewOf(p: OpenPreview) {
  return {
    port: p.port,
    url: p.url,
    ...(p.subdomainUrl ? { subdomainUrl: p.subdomainUrl } : {}),
    createdAt: p.createdAt.toISOString(),
    expiresAt: p.expiresAt.toISOString(),
    session: sessionLabel(p.session),
  };
}

/** The previews a session opened, for hub_sessions. */
export function sessionPreviews(hub: SessionServices, session: ClientSession) {
  return hub.previews.list({ session: session.id }).map(previewOf);
}

export const hubPreview = defineTool({
  name: "hub_preview",
  title: "Preview an app",
  description:
    "A URL that opens, in anyone's browser, the web app your processes serve on a port (start it first, e.g. `python3 -m http.server 5173`). " +
    "Ends when it expires, with hub_end_preview, or with your session.",
  input: {
    port: z.number().int().min(1).max(65535),
    ttlSeconds: z.number().int().min(1).optional().describe("Lifetime (default 1 h)"),
  },
  output: {
    ...previewShape,
    token: z.string().describe("Names the preview for hub_end_preview"),
    notes: z.array(z.string()),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run({ port, ttlSeconds }, { hub, session, channel }: Context) {
    const ports = session.tenant.network?.ports;
    // only ever the tenant's own block: a port outside it can hold nothing of the tenant's but an unbound listener in the ephemeral range
    if (ports && (port < ports.low || port > ports.high)) {
      return reply.error(
        `Cannot preview port ${port}: your processes listen only on TCP ports ${formatRange(ports)}. Start the app on one of them ($PORT is ${ports.low}), then ask again.`,
      );
    }
    const uid = session.tenant.identity?.uid ?? process.getuid?.() ?? 0;
    const opened = await hub.previews.open({ tenant: session.tenant.name, uid, session: session.id, port, ttlSeconds }, channel.requestBase?.());
    if (typeof opened === "string") return reply.error(opened);
    const notes = [
      `The app sees the path after /preview/${opened.token}: link its files relatively, or honor X-Forwarded-Prefix (Vite: --base /preview/${opened.token}/).`,
      "Anyone with the URL can open the app until it expires: share it only with those who may.",
      ...(opened.subdomainUrl ? ["subdomainUrl gives the app an origin of its own (cookies, storage, absolute paths): prefer it."] : []),
    ];
    const data = { ...previewOf(opened), token: opened.token, notes };
    const also = data.subdomainUrl ? `\nor ${data.subdomainUrl}` : "";
    return reply.data(`Port ${port} opens at ${data.url}${also}\nuntil ${data.expiresAt}.\n${notes.join("\n")}`, data);
  },
});

export const hubEndPreview = defineTool({
  name: "hub_end_preview",
  title: "End a preview",
  description: "End a preview: its URL stops working.",
  input: { preview: z.string().min(1).max(2048).describe("Its token or URL") },
  output: { ended: previewEntry },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ preview }, { hub, session }: Context) {
    const ended = hub.previews.end(session.tenant.name, preview);
    if (!ended)
      return reply.error(
        `No open preview of yours is named '${preview.slice(0, 200)}': give the token or URL hub_preview returned (hub_sessions lists your session's).`,
      );
    const data = { ended: previewOf(ended) };
    return reply.data(`Preview of port ${ended.port} ended: ${ended.url} no longer opens.`, data);
  },
});
