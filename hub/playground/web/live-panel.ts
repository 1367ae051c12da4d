// The Live panel: this page's session's browser tabs (browser_tabs list) and terminals
// (terminal_session_list), each watched live through hub_live_view, whose /live/<token> page
// opens framed in the page or in a new tab. Tool results of the browser and of terminal sessions
// get a "Watch live" button (watchButton). Every call the panel makes is the page's bookkeeping.
import type { CallToolResult } from "@modelcontextprotocol/client";
import type { Connection } from "./connection.js";
import { h, replace } from "./dom.js";
import { callHubTool, coalesced, tenantPanel } from "./tenant-panel.js";

const TABS_TOOL = "browser_tabs";
const TERMINALS_TOOL = "terminal_session_list";
const LIVE_TOOL = "hub_live_view";

/** What a live view shows: the current tab ({}), a tab, or a terminal. */
export type LiveTarget = { tab?: number; terminal?: string };

interface TabEntry {
  index: number;
  url: string;
  title: string;
  current: boolean;
}
interface TerminalEntry {
  id: string;
  program: string;
  alive: boolean;
}

/** Only a view under this hub's own /live/ is framed: the page loads its path from the page's own origin. */
export function liveUrl(text: unknown): string | undefined {
  try {
    const url = new URL(String(text), location.href);
    return /^\/live\/[A-Za-z0-9-]+$/.test(url.pathname) ? `${location.origin}${url.pathname}` : undefined;
  } catch {
    return undefined;
  }
}

/** The view a tool's result is about: the current tab for the browser's tools, the terminal a session tool named; none for the rest. */
export function targetOf(tool: string, args: Record<string, unknown>, result: CallToolResult): LiveTarget | undefined {
  if (result.isError) return undefined;
  if (tool.startsWith("browser_")) return tool === "browser_close" ? undefined : {};
  if (!/^terminal_session_(create|send|read|resize)$/.test(tool)) return undefined;
  const id = (result.structuredContent as { id?: unknown } | undefined)?.id ?? args.id;
  return typeof id === "string" ? { terminal: id } : undefined;
}

export class LivePanel {
  readonly element: HTMLDetailsElement;
  private readonly panel = tenantPanel("live", "Live view", () => void this.refresh(true), {
    tool: `${TABS_TOOL}, ${TERMINALS_TOOL}`,
    scope: "this session's only",
  });
  /** Listing tabs starts the browser: the panel lists a kind only once the page used it (or the person asked). */
  private readonly used = { browser: false, terminal: false };
  private tabs: TabEntry[] = [];
  private terminals: TerminalEntry[] = [];
  private viewer?: HTMLElement;
  readonly refresh: (asked?: boolean) => Promise<void>;

  constructor(
    private readonly connection: () => Connection | undefined,
    /** Whether the session has a tool (its catalog may leave the browser, the terminal or hub_live_view out). */
    private readonly hasTool: (name: string) => boolean,
  ) {
    this.element = this.panel.element;
    const load = coalesced(() => this.load());
    this.refresh = (asked = false) => {
      if (asked) this.used.browser = this.used.terminal = true;
      return load();
    };
    this.show();
  }

  /** A tool of this page's finished: a browser or terminal tool may have changed what there is to watch. */
  afterCall(tool: string): void {
    const kind = tool.startsWith("browser_") ? "browser" : tool.startsWith("terminal_") ? "terminal" : undefined;
    if (!kind) return;
    this.used[kind] = true;
    void this.refresh();
  }

  /** "Watch live" for a tool's result, when it is about something a live view shows. */
  watchButton(tool: string, args: Record<string, unknown>, result: CallToolResult): HTMLElement | null {
    const target = targetOf(tool, args, result);
    if (!target || !this.hasTool(LIVE_TOOL)) return null;
    return h(
      "button",
      { type: "button", class: "secondary small watch-live", "data-action": "watch-live", onclick: () => void this.watch(target) },
      "Watch live",
    );
  }

  private async load(): Promise<void> {
    const connection = this.connection();
    if (!connection) return;
    this.element.dataset.state = "loading";
    try {
      const [tabs, terminals] = await Promise.all([
        this.used.browser && this.hasTool(TABS_TOOL) ? callHubTool(connection, TABS_TOOL, { action: "list" }, { bookkeeping: true }) : undefined,
        this.used.terminal && this.hasTool(TERMINALS_TOOL) ? callHubTool(connection, TERMINALS_TOOL, {}, { bookkeeping: true }) : undefined,
      ]);
      if (tabs) this.tabs = (tabs.tabs as TabEntry[] | undefined) ?? [];
      if (terminals) this.terminals = (terminals.terminals as TerminalEntry[] | undefined) ?? [];
      this.show();
      this.element.dataset.state = "ok";
    } catch (err) {
      this.panel.failed(err);
    }
  }

  private show(): void {
    this.panel.counted(this.tabs.length + this.terminals.length);
    const watch = (target: LiveTarget, label: string) =>
      this.hasTool(LIVE_TOOL)
        ? h("button", { type: "button", class: "ghost small", "data-action": "watch", onclick: () => void this.watch(target) }, label)
        : null;
    replace(
      this.panel.list,
      this.tabs.length || this.terminals.length
        ? null
        : h("li", { class: "muted" }, "Nothing yet: open a page with a browser tool or a terminal with terminal_session_create."),
      ...this.tabs.map((t) =>
        h(
          "li",
          { class: "live-entry", "data-kind": "browser", "data-tab": String(t.index), title: t.url },
          h("span", null, `tab ${t.index}${t.current ? " (current)" : ""} `),
          h("span", { class: "muted" }, t.title || t.url, " "),
          watch({ tab: t.index }, "Watch"),
        ),
      ),
      ...this.terminals.map((t) =>
        h(
          "li",
          { class: "live-entry", "data-kind": "terminal", "data-terminal": t.id },
          h("span", null, `${t.id} `),
          h("span", { class: "muted" }, `${t.program}${t.alive ? "" : " (ended)"} `),
          watch({ terminal: t.id }, "Watch"),
        ),
      ),
    );
  }

  /** Asks the hub for a view and shows it framed in the page; the person may open it in a tab of its own. */
  async watch(target: LiveTarget): Promise<void> {
    const connection = this.connection();
    if (!connection) return;
    const what = target.terminal ? `terminal ${target.terminal}` : target.tab !== undefined ? `tab ${target.tab}` : "the current tab";
    try {
      const view = await callHubTool(connection, LIVE_TOOL, { ...target }, { bookkeeping: true });
      const url = liveUrl(view.url);
      if (!url) throw new Error(`the hub answered a URL that is not a live view: ${String(view.url)}`);
      this.open(url, what, String(view.kind));
    } catch (err) {
      this.open(undefined, what, "error", (err as Error).message);
    }
  }

  private open(url: string | undefined, what: string, kind: string, problem?: string): void {
    this.viewer?.remove();
    const close = h("button", { type: "button", class: "ghost small", "data-action": "close-live" }, "Close");
    const viewer = h(
      "div",
      { class: "overlay live-viewer", role: "dialog", "aria-label": `Live view of ${what}`, "data-kind": kind },
      h(
        "div",
        { class: "live-head" },
        h("strong", null, `Live: ${what}`),
        h("span", { class: "spacer" }),
        url ? h("a", { href: url, target: "_blank", rel: "noopener noreferrer", class: "small" }, "Open in a new tab") : null,
        close,
      ),
      url
        ? h("iframe", { class: "live-frame", src: url, title: `Live view of ${what}`, referrerpolicy: "no-referrer" })
        : h("p", { class: "muted" }, `Cannot open a live view: ${problem}`),
    );
    close.addEventListener("click", () => {
      viewer.remove();
      if (this.viewer === viewer) this.viewer = undefined;
    });
    document.body.appendChild(viewer);
    this.viewer = viewer;
  }
}
