// One client session's browser: its own BrowserContext (cookies, storage, tabs) inside the shared
// Chromium, the current tab, an open dialog, and notices for the next response (a download
// finished, a tab opened, Chromium was relaunched and the pages were lost).
import type { BrowserContext, Dialog, Page } from "playwright-core";
import type { Logger } from "../lib/log.js";
import { ToolError } from "../lib/tool.js";
import type { ChromiumHost } from "./chromium.js";
import { Recorder } from "./recorder.js";
import { asToolNavigation } from "./workspace-access.js";
import { serveWorkspace } from "./workspace-origin.js";
import { toolName } from "../lib/names.js";
import { errorMessage } from "../lib/log.js";
import { recordedKinds } from "../lib/recording-names.js";
import { BrowserTrace } from "./trace.js";

export const DEFAULT_VIEWPORT = { width: 1280, height: 720 };
const ACTION_TIMEOUT_MS = 10_000;
const NAVIGATION_TIMEOUT_MS = 30_000;

/** "A confirm dialog is open: \"Sure?\"" — the same words wherever a dialog blocks the page. */
export function describeDialog(d: Dialog): string {
  const prompt = d.type() === "prompt" ? ` (default value "${d.defaultValue()}")` : "";
  return `${/^[aeiou]/.test(d.type()) ? "An" : "A"} ${d.type()} dialog is open: "${d.message()}"${prompt}`;
}

export class BrowserSession {
  private context?: BrowserContext;
  private generation = 0;
  private currentPage?: Page;
  private readonly pages: Page[] = [];
  /** Live views following the current tab (./live.ts): told when it changes. */
  private readonly currentWatchers = new Set<(page: Page | undefined) => void>();
  /** Tabs a person controls through a live view: the agent's tools on them do nothing meanwhile. */
  private readonly heldByPerson = new Set<Page>();
  /** A person handed a tab back since the agent's last call: its next result says so, once. */
  private handedBack = false;

  /** Whether Chromium died under this session's context: its tabs are gone with it, whatever a call did in them. */
  get browserLost(): boolean {
    return this.context !== undefined && !this.host.alive(this.generation);
  }

  /** Tabs this session has adopted so far. */
  get tabCount(): number {
    return this.pages.length;
  }
  private notices: string[] = [];
  /** A dialog that is open and blocks its page until handle_dialog answers it. */
  dialog?: Dialog;
  /** The action that opened the dialog; it finishes once the dialog is answered. */
  blockedAction?: Promise<unknown>;
  private readonly dialogWaiters = new Set<(d: Dialog) => void>();
  /** The latest snapshot, so `snapshot` with an offset pages through it without renumbering refs. */
  lastSnapshot?: { url: string; text: string };
  readonly recorder: Recorder;
  /** Navigation away from a file: document (never expected); responses wait for it so none shows it. */
  leaving?: Promise<void>;
  /** Set once the session ended (closed or idle): its state is never rebuilt. */
  private closed = false;
  /** The context's recording (./trace.ts), while it is recorded and after, until the context closes. */
  trace?: BrowserTrace;

  constructor(
    private readonly host: ChromiumHost,
    readonly workspace: string,
    private readonly log: Logger,
    /** The client session (the hub's id) this browser is, for its recordings. */
    private readonly session = "standalone",
  ) {
    this.recorder = new Recorder(
      workspace,
      (page) => this.pages.indexOf(page),
      (text) => this.notice(text),
    );
  }

  private get current(): Page | undefined {
    return this.currentPage;
  }

  private set current(page: Page | undefined) {
    if (page === this.currentPage) return;
    this.currentPage = page;
    for (const watcher of this.currentWatchers) watcher(page);
  }

  /** The current tab if one is open, without opening one. */
  currentTab(): Page | undefined {
    return this.currentPage && !this.currentPage.isClosed() ? this.currentPage : undefined;
  }

  /** Call `watcher` whenever the current tab changes; returns how to stop. */
  watchCurrent(watcher: (page: Page | undefined) => void): () => void {
    this.currentWatchers.add(watcher);
    return () => this.currentWatchers.delete(watcher);
  }

  /** A person takes (true) or gives back (false) control of a tab. */
  holdByPerson(page: Page, held: boolean): void {
    if (held) this.heldByPerson.add(page);
    else if (this.heldByPerson.delete(page)) this.handedBack = true;
  }

  isHeldByPerson(page: Page | undefined): boolean {
    return page !== undefined && this.heldByPerson.has(page);
  }

  /** Whether a person handed a tab back since this was last asked. */
  takeHandedBack(): boolean {
    const was = this.handedBack;
    this.handedBack = false;
    return was;
  }

  notice(text: string): void {
    this.notices.push(text);
  }

  takeNotices(): string[] {
    const taken = this.notices;
    this.notices = [];
    return taken;
  }

  /** The session's context, created on first use and recreated when Chromium was relaunched. */
  async ensureContext(): Promise<BrowserContext> {
    if (this.browserLost) {
      this.notice("Chromium stopped (crashed or was killed) and has been relaunched: this session's tabs, cookies and storage were lost. Navigate again.");
      this.forget();
    }
    if (this.context) return this.context;
    const browser = await this.host.browser();
    const context = await browser.newContext({ acceptDownloads: true, viewport: DEFAULT_VIEWPORT });
    if (this.closed) {
      // The session ended while Chromium was starting: do not leak a context nobody will close.
      await context.close().catch(() => undefined);
      throw new ToolError("This client session was closed while the browser was starting.");
    }
    await serveWorkspace(context, this.workspace, (text) => this.notice(text));
    context.setDefaultTimeout(ACTION_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(NAVIGATION_TIMEOUT_MS);
    context.on("page", (page) => this.adopt(page, true));
    this.context = context;
    this.generation = this.host.generation;
    if (recordedKinds().has("browser")) await this.record(true);
    return context;
  }

  /**
   * Start recording this session's browser (every tab), or stop and write the recording. A trace
   * that cannot start is logged and the browser works unrecorded.
   */
  async record(on: boolean): Promise<BrowserTrace | undefined> {
    if (!on) {
      await this.trace?.stop();
      return this.trace;
    }
    const context = await this.ensureContext();
    if (this.trace?.recording.active) return this.trace;
    try {
      this.trace = await BrowserTrace.start(context, this.workspace, this.session, this.log);
    } catch (err) {
      this.log.warn("browser not recorded", { session: this.session, error: errorMessage(err) });
    }
    return this.trace;
  }

  /** The current tab (opening one if there is none). Refuses while a dialog blocks the page. */
  async page(options: { allowDialog?: boolean } = {}): Promise<Page> {
    await this.ensureContext();
    if (this.dialog && !options.allowDialog) {
      throw new ToolError(`${describeDialog(this.dialog)}; answer it with ${toolName("handle_dialog")} first.`);
    }
    if (!this.current || this.current.isClosed()) this.current = this.pages.at(-1) ?? (await this.newTab());
    return this.current;
  }

  async newTab(url?: string): Promise<Page> {
    const context = await this.ensureContext();
    const page = await context.newPage(); // the "page" listener adopts it
    this.current = page;
    if (url) await asToolNavigation(page, url, () => page.goto(url));
    return page;
  }

  tabs(): Page[] {
    return this.pages.filter((p) => !p.isClosed());
  }

  currentIndex(): number {
    return this.current ? this.pages.indexOf(this.current) : -1;
  }

  select(index: number): Page {
    const page = this.tabAt(index);
    this.current = page;
    return page;
  }

  /** The tab with this index; an unknown index is refused with the list of open tabs. */
  tabAt(index: number): Page {
    const page = this.pages[index];
    if (!page) {
      const open = this.pages.map((p, i) => `${i}: ${p.url()}`).join(", ");
      throw new ToolError(
        `No tab ${index} in this session; ${open ? `open tabs are ${open}` : "no tabs are open"} (see ${toolName("tabs")} with action "list").`,
      );
    }
    return page;
  }

  /**
   * Run an action on a page; if it opens a dialog, return at once (the page is blocked until the
   * dialog is answered) and keep the action to finish later.
   */
  async act<T>(action: () => Promise<T>): Promise<{ value?: T; dialog?: Dialog }> {
    let resolveDialog!: (d: Dialog) => void;
    const shown = new Promise<Dialog>((resolve) => (resolveDialog = resolve));
    this.dialogWaiters.add(resolveDialog);
    const running = action();
    try {
      const winner = await Promise.race([running.then((value) => ({ value })), shown.then((dialog) => ({ dialog }))]);
      if ("dialog" in winner) this.blockedAction = running.catch(() => undefined);
      return winner;
    } finally {
      this.dialogWaiters.delete(resolveDialog);
    }
  }

  private adopt(page: Page, announce: boolean): void {
    if (this.pages.includes(page)) return;
    this.pages.push(page);
    this.recorder.attach(page);
    page.on("dialog", (dialog) => {
      this.dialog = dialog;
      for (const waiter of this.dialogWaiters) waiter(dialog);
    });
    // Workspace files are served over http (workspace-origin.ts) and Chromium refuses file: loads
    // from http and data: documents, so no frame should ever commit a file: URL. Should one get
    // through anyway, leave it at once rather than let a snapshot read it.
    page.on("framenavigated", (frame) => {
      if (!frame.url().startsWith("file:")) return;
      this.notice(`Blocked ${frame.url()}: file: documents are not allowed; open workspace files with navigate.`);
      this.leaving = frame.goto("about:blank").then(
        () => undefined,
        () => undefined,
      );
    });
    page.on("close", () => {
      const index = this.pages.indexOf(page);
      if (index >= 0) this.pages.splice(index, 1);
      if (this.dialog?.page() === page) this.dialog = undefined;
      this.heldByPerson.delete(page);
      if (this.current === page) this.current = this.pages.at(-1);
    });
    // Tabs the page opens itself (window.open, target=_blank) are worth telling the model about.
    const opener = page.opener();
    void opener.then((o) => {
      if (announce && o) this.notice(`The page opened a new tab ${this.pages.indexOf(page)}: ${page.url()} (switch with ${toolName("tabs")} action "select").`);
    });
  }

  /** The session ended: close everything and refuse to start again. */
  async dispose(): Promise<void> {
    this.closed = true;
    await this.close();
  }

  /** Close this session's context: all its tabs, cookies and storage (the `close` tool). */
  async close(): Promise<void> {
    const context = this.context;
    if (context && !this.browserLost) await this.trace?.stop();
    this.forget();
    await context?.close().catch((err) => this.log.debug("context close failed", { error: String(err) }));
  }

  private forget(): void {
    this.context = undefined;
    this.current = undefined;
    this.pages.length = 0;
    this.heldByPerson.clear();
    this.dialog = undefined;
    this.blockedAction = undefined;
    this.lastSnapshot = undefined;
    this.recorder.clear();
    this.trace?.lost();
    this.trace = undefined;
  }
}
