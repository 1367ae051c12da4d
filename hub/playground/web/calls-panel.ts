// The page's own recent tool calls, as hub_calls reports them from the hub's call records: each
// one's tool, outcome and duration, newest first; only this connection's session (or 2026 context).
import type { Connection } from "./connection.js";
import { h, replace } from "./dom.js";
import { coalesced, tenantPanel } from "./tenant-panel.js";

/** hub_calls' entry for one call (hub/tools/calls-tool.ts). */
interface CallEntry {
  tool: string;
  outcome: string;
  durationMs: number;
  at: string;
  errorType?: string;
  taskId?: string;
}

const SHOWN = 50;
/** What the side panels call after each run (this one, Clients and Tasks; Recordings after browser and terminal calls). */
const PANEL_TOOLS = new Set(["hub_calls", "hub_sessions", "hub_recordings"]);

/** A duration a person reads at a glance: milliseconds below a second, seconds above. */
function duration(ms: number): string {
  return ms < 1000 ? `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export class CallsPanel {
  readonly element: HTMLDetailsElement;
  private readonly panel = tenantPanel("calls", "Recent calls", () => void this.refresh(), { tool: "hub_calls", scope: "this session's only" });
  /** Asks hub_calls again; a refresh asked for while one runs runs once after it. */
  readonly refresh = coalesced(() => this.load());

  constructor(private readonly connection: () => Connection | undefined) {
    this.element = this.panel.element;
  }

  private load(): Promise<void> {
    return this.panel.fill(this.connection(), "hub_calls", { limit: SHOWN }, (data) => this.show((data as { calls?: CallEntry[] }).calls ?? []));
  }

  private show(calls: CallEntry[]): void {
    // the calls the page makes to fill its side panels are its bookkeeping, not what a person ran
    const rows = calls
      .filter((c) => !PANEL_TOOLS.has(c.tool))
      .map((c) =>
        h(
          "li",
          {
            class: "call-entry",
            "data-tool": c.tool,
            "data-outcome": c.outcome,
            "data-duration": String(c.durationMs),
            title: `${c.at}${c.taskId ? `, task ${c.taskId}` : ""}`,
          },
          h("span", { class: `badge call-outcome outcome-${c.outcome}` }, c.outcome),
          h("code", { class: "call-tool", title: c.tool }, c.tool),
          h("span", { class: "call-duration" }, duration(c.durationMs)),
          c.errorType ? h("span", { class: "muted call-error" }, c.errorType) : null,
        ),
      );
    this.panel.counted(rows.length);
    replace(this.panel.list, rows.length ? rows : h("li", { class: "muted" }, "No calls yet."));
  }
}
