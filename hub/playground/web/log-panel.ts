// The live log of this page's MCP connection: every request, response and notification crossing the
// wire, newest at the bottom, each foldable to its full JSON. The page's own bookkeeping (the side
// panels' hub_sessions and hub_calls, a task's tasks/get polls) is logged too, but hidden until asked
// for: a person reads the log for the calls they ran.
import type { JSONRPCMessage } from "@modelcontextprotocol/client";
import { BOOKKEEPING_META_KEY } from "../../../servers/lib/session-events.js";
import type { Direction } from "./connection.js";
import { formatDuration, h, replace } from "./dom.js";
import { jsonTree } from "./json-tree.js";

const MAX_ENTRIES = 1000;

type Kind = "request" | "response" | "error" | "notification";

/** The requests the page sends for itself: a side panel's call marked as bookkeeping, or a poll of a task's status. */
function isBookkeeping(message: JSONRPCMessage): boolean {
  const m = message as { method?: string; params?: { _meta?: Record<string, unknown> } };
  return m.method === "tasks/get" || m.params?._meta?.[BOOKKEEPING_META_KEY] === true;
}

export class LogPanel {
  readonly element: HTMLElement;
  private readonly list = h("ol", { class: "log-list", "aria-live": "polite" });
  private readonly counter = h("span", { class: "muted" }, "0 messages");
  private readonly filter = h("input", { type: "search", placeholder: "Filter (method, id…)", class: "log-filter", "aria-label": "Filter the log" });
  private readonly showOwn = h("input", { type: "checkbox", "data-action": "show-bookkeeping" });
  private readonly ownCount = h("span", { class: "own-count" }, "");
  private readonly pending = new Map<string, { method: string; at: number; own: boolean }>();
  private count = 0;
  private own = 0;

  constructor() {
    const clear = h("button", { type: "button", class: "ghost small", title: "Clear the log" }, "Clear");
    clear.addEventListener("click", () => {
      replace(this.list);
      this.count = this.own = 0;
      this.counter.textContent = "0 messages";
      this.ownCount.textContent = "";
    });
    this.filter.addEventListener("input", () => this.applyFilter());
    this.showOwn.addEventListener("change", () => this.applyFilter());
    this.element = h(
      "aside",
      { class: "log-panel", id: "log" },
      h("div", { class: "panel-head" }, h("h2", null, "Message log"), this.counter, h("span", { class: "spacer" }), clear),
      h(
        "div",
        { class: "log-tools" },
        this.filter,
        h(
          "label",
          { class: "log-own", title: "The side panels' hub_sessions and hub_calls, and the tasks/get that follow a task: the page's own requests, not yours" },
          this.showOwn,
          " Show the page's own bookkeeping",
          this.ownCount,
        ),
      ),
      this.list,
    );
  }

  /** Record one message crossing the wire. */
  add(direction: Direction, message: JSONRPCMessage): void {
    const { kind, label, own } = this.describe(direction, message);
    const stick = this.list.scrollTop + this.list.clientHeight >= this.list.scrollHeight - 24;
    const time = new Date().toLocaleTimeString([], { hour12: false });
    const details = h(
      "details",
      { class: `log-entry ${kind} ${direction}`, "data-kind": kind },
      h(
        "summary",
        null,
        h("span", { class: "arrow", title: direction === "out" ? "sent by the page" : "received from the hub" }, direction === "out" ? "→" : "←"),
        h("span", { class: "log-label" }, label),
        h("time", null, time),
      ),
    );
    // the JSON is built only when someone opens the entry: progress streams can be long
    details.addEventListener("toggle", () => details.open && details.childElementCount === 1 && details.appendChild(jsonTree(message, { openDepth: 3 })), {
      once: false,
    });
    const li = h("li", own ? { "data-bookkeeping": "" } : null, details);
    li.dataset.search = `${label} ${JSON.stringify(message).slice(0, 2000)}`.toLowerCase();
    this.list.appendChild(li);
    this.count++;
    if (own) this.ownCount.textContent = ` (${++this.own})`;
    while (this.list.childElementCount > MAX_ENTRIES) this.list.firstElementChild?.remove();
    this.counter.textContent = `${this.count} message${this.count === 1 ? "" : "s"}`;
    this.applyFilter(li);
    if (stick) this.list.scrollTop = this.list.scrollHeight;
  }

  /** A note from the page itself (connection state), shown in the same timeline. */
  note(text: string, level: "info" | "error" = "info"): void {
    const li = h("li", { class: `log-note ${level}` }, text);
    li.dataset.search = text.toLowerCase();
    this.list.appendChild(li);
    this.list.scrollTop = this.list.scrollHeight;
  }

  private describe(direction: Direction, message: JSONRPCMessage): { kind: Kind; label: string; own: boolean } {
    const m = message as { id?: string | number; method?: string; error?: { code: number; message: string }; params?: Record<string, unknown> };
    const key = `${direction}:${m.id}`;
    if (m.method && m.id !== undefined) {
      const own = isBookkeeping(message);
      this.pending.set(`${direction === "out" ? "in" : "out"}:${m.id}`, { method: m.method, at: performance.now(), own });
      const tool = m.method === "tools/call" ? ` ${String(m.params?.name ?? "")}` : "";
      return { kind: "request", label: `${m.method}${tool} #${m.id}`, own };
    }
    if (m.method) {
      const p = m.params ?? {};
      const extra =
        m.method === "notifications/progress"
          ? ` ${p.progress}${p.total !== undefined ? `/${p.total}` : ""}${p.message ? ` ${p.message}` : ""}`
          : m.method === "notifications/cancelled"
            ? ` #${p.requestId}`
            : m.method === "notifications/message"
              ? ` ${String(p.level)}: ${JSON.stringify(p.data ?? null).slice(0, 120)}`
              : "";
      return { kind: "notification", label: `${m.method}${extra}`, own: false };
    }
    const origin = this.pending.get(key);
    this.pending.delete(key);
    const took = origin ? ` · ${formatDuration(performance.now() - origin.at)}` : "";
    const what = origin ? `${origin.method} #${m.id}` : `#${m.id}`;
    // a failed bookkeeping request is shown all the same: the panel it fills says it could not
    if (m.error) return { kind: "error", label: `${what} error ${m.error.code}: ${m.error.message}${took}`, own: false };
    const isError = (m as { result?: { isError?: boolean } }).result?.isError === true;
    return { kind: isError ? "error" : "response", label: `${what} result${isError ? " (isError)" : ""}${took}`, own: !isError && (origin?.own ?? false) };
  }

  private applyFilter(only?: HTMLElement): void {
    const q = this.filter.value.trim().toLowerCase();
    const items = only ? [only] : (Array.from(this.list.children) as HTMLElement[]);
    const showOwn = this.showOwn.checked;
    for (const li of items) li.hidden = (q !== "" && !(li.dataset.search ?? "").includes(q)) || (!showOwn && li.dataset.bookkeeping !== undefined);
  }
}
