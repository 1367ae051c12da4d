// hub_live_view: a URL under the hub's address where a person watches one of the caller's browser
// tabs or terminals live, and can take control (hub/live/). Bound to the caller's tenant and
// session like a preview: it ends when it expires or with the session.
import { z } from "zod";
import { defineTool, reply } from "../../servers/lib/tool.js";
import type { SessionServices } from "../sessions/services.js";
import type { HubToolCall } from "../sessions/tool-calls.js";

type Context = HubToolCall & { hub: SessionServices };

export const hubLiveView = defineTool({
  name: "hub_live_view",
  title: "Live view",
  description: "A URL where a person watches your browser tab or terminal live and can take over. No tab or terminal: your current tab.",
  input: {
    tab: z.number().int().min(0).optional(),
    terminal: z.string().min(1).max(64).optional().describe("Terminal id"),
    ttlSeconds: z.number().int().min(1).optional(),
    embedded: z.boolean().optional().describe("Set by the live view MCP App: the socket opens from any origin"),
  },
  output: {
    url: z.string().describe("Opens the view in a plain browser: /live/<token> under the hub's address"),
    expiresAt: z.string(),
    kind: z.enum(["browser", "terminal"]),
    tab: z.number().optional(),
    terminal: z.string().optional(),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run({ tab, terminal, ttlSeconds, embedded }, { hub, session, channel }: Context) {
    if (tab !== undefined && terminal !== undefined) return reply.error("Give tab or terminal, not both: one view shows one thing.");
    const view = hub.live.open({ tenant: session.tenant.name, session: session.id, tab, terminal, ttlSeconds, embedded }, channel.requestBase?.());
    if (typeof view === "string") return reply.error(view);
    const data = {
      url: view.url,
      expiresAt: view.expiresAt.toISOString(),
      kind: view.kind,
      ...(view.tab !== undefined ? { tab: view.tab } : {}),
      ...(view.terminal ? { terminal: view.terminal } : {}),
    };
    const shows = view.terminal ? `terminal ${view.terminal}` : view.tab !== undefined ? `tab ${view.tab}` : "your current browser tab";
    return reply.data(
      `A live view of ${shows} opens at ${data.url} until ${data.expiresAt}. Anyone with the URL can watch and take control: share it only with those who may.`,
      data,
    );
  },
});
