// The tenant's live clients beside this page's own: each 2025 session and 2026 context with its
// protocol era and version, as hub_sessions reports them. hub_sessions answers for the caller's own
// tenant only, so the page never learns of another tenant's clients; and it names the other sessions
// by a digest, never by their ids.
import type { Connection } from "./connection.js";
import { h, replace } from "./dom.js";
import { tenantPanel } from "./tenant-panel.js";

/** hub_sessions' entry for one session or context (hub/tools/session-list.ts). */
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
  private readonly panel = tenantPanel("clients", "Clients of this tenant", () => void this.refresh());

  constructor(private readonly connection: () => Connection | undefined) {
    this.element = this.panel.element;
  }

  refresh(): Promise<void> {
    return this.panel.fill(this.connection(), "hub_sessions", { limit: SHOWN }, (data) => {
      const { tenantSessions, total } = data as { tenantSessions: SessionEntry[]; total?: number };
      this.show(tenantSessions, total ?? tenantSessions.length);
    });
  }

  private show(sessions: SessionEntry[], total: number): void {
    this.panel.counted(total);
    replace(
      this.panel.list,
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
