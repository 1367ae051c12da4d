// The tenant's live clients beside this page's own: each 2025 session and 2026 context with its
// protocol era and version, as hub_sessions reports them. hub_sessions answers for the caller's own
// tenant only, so the page never learns of another tenant's clients; and it names the other sessions
// by a digest, never by their ids.
import type { CallToolResult } from "@modelcontextprotocol/client";
import type { Connection } from "./connection.js";
import { h, replace } from "./dom.js";

/** hub_sessions' entry for one session or context (hub/sessions/session-list.ts). */
interface SessionEntry {
  label: string;
  current: boolean;
  transport: string;
  era: "modern" | "legacy";
  protocolVersion: string | null;
  client?: string;
  callsInFlight: number;
}

/** One page of them is all a small panel shows; the rest are counted. */
const SHOWN = 50;

const TRANSPORTS: Record<string, string> = {
  streamable: "Streamable HTTP session",
  sse: "legacy SSE session",
  implicit: "plain JSON (no session)",
  stdio: "stdio session",
  modern: "2026 context",
};

export class ClientsPanel {
  readonly element: HTMLDetailsElement;
  private readonly list = h("ul", { class: "clients-list" });
  private readonly summaryCount = h("span", { class: "muted" }, "");

  constructor(private readonly connection: () => Connection | undefined) {
    const refresh = h(
      "button",
      { type: "button", class: "ghost small", "data-action": "refresh-clients", title: "Ask the hub again (hub_sessions)" },
      "Refresh",
    );
    refresh.addEventListener("click", () => void this.refresh());
    this.element = h(
      "details",
      { class: "clients-panel", open: true },
      h("summary", { class: "clients-summary" }, h("span", { class: "picker-label" }, "Clients of this tenant"), this.summaryCount),
      h("div", { class: "clients-actions" }, h("span", { class: "muted small-print" }, "from hub_sessions: your tenant's only"), refresh),
      this.list,
    );
  }

  async refresh(): Promise<void> {
    const connection = this.connection();
    if (!connection) return;
    this.element.dataset.state = "loading";
    try {
      const result = (await connection.client.request({
        method: "tools/call",
        params: { name: "hub_sessions", arguments: { limit: SHOWN } },
      })) as CallToolResult;
      if (result.isError) throw new Error(result.content.map((c) => (c.type === "text" ? c.text : "")).join(" "));
      const data = result.structuredContent as { tenantSessions: SessionEntry[]; total?: number };
      this.show(data.tenantSessions, data.total ?? data.tenantSessions.length);
    } catch (err) {
      this.element.dataset.state = "error";
      replace(this.list, h("li", { class: "muted" }, `Cannot list them: ${(err as Error).message}`));
    }
  }

  private show(sessions: SessionEntry[], total: number): void {
    this.element.dataset.state = "ok";
    this.summaryCount.textContent = ` ${total}`;
    replace(
      this.list,
      sessions.map((s) =>
        h(
          "li",
          {
            class: `client-entry${s.current ? " current" : ""}`,
            "data-label": s.label,
            "data-era": s.era,
            "data-transport": s.transport,
            "data-version": s.protocolVersion ?? "",
          },
          h("span", { class: `era-badge era-${s.era}` }, s.protocolVersion ?? "no handshake"),
          h("span", { class: "client-what" }, TRANSPORTS[s.transport] ?? s.transport),
          s.current ? h("span", { class: "badge" }, "this page") : null,
          h("span", { class: "muted client-who", title: `label ${s.label}` }, s.client ?? s.label),
        ),
      ),
      total > sessions.length ? h("li", { class: "muted" }, `and ${total - sessions.length} more`) : null,
    );
  }
}
