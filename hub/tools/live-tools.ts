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
  description:
    "A URL where a person watches one of your browser tabs or terminals live and can take control (you are told while they hold it). " +
    "Give tab (a browser_tabs index) or terminal (a terminal_session_create id); neither follows your current browser tab. " +
    "Ends when it expires or with your session.",
  input: {
    tab: z.number().int().min(0).optional().describe("A tab of this session (browser_tabs); the view stays on it"),
    terminal: z.string().min(1).max(64).optional().describe("A terminal of this session (its id, e.g. t1a2b3c4d)"),
    ttlSeconds: z.number().int().min(1).optional().describe("Lifetime (default 1 h)"),
    embedded: z.boolean().optional().describe("Set by the live view MCP App, which draws the view in the chat: its socket opens from any origin"),
  },
  output: {
    url: z.string().describe("Opens the view in a plain browser: /live/<token> under the hub's address"),
    expiresAt: z.string(),
    kind: z.enum(["browser", "terminal"]),
    tab: z.number().optional(),
    terminal: z.string().optional(),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run({ tab, terminal, ttlSeconds, embedded }, { hub, session }: Context) {
    if (tab !== undefined && terminal !== undefined) return reply.error("Give tab or terminal, not both: one view shows one thing.");
    const view = hub.live.open({ tenant: session.tenant.name, session: session.id, tab, terminal, ttlSeconds, embedded });
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
