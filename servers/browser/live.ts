// A session's tab, live (../lib/live.ts): JPEG frames from Chromium's own screencast, which paints
// only while the page changes, at most the viewer's size; one frame in flight (Chromium is told a
// frame was taken only once the hub took it); the tab's navigations; and, while a person holds
// control, their pointer and keys. A view of no tab in particular follows the session's current tab.
import type { CDPSession, Page } from "playwright-core";
import type { LiveProvider, LiveStream, StreamEvent } from "../lib/live-host.js";
import type { FrameMetadata, LiveInputEvent, LiveOpenParams } from "../lib/live.js";
import { errorMessage, type Logger } from "../lib/log.js";
import { browserSessionOf } from "./runtime.js";
import type { BrowserSession } from "./session.js";

const JPEG_QUALITY = 60;

interface ScreencastFrame {
  data: string;
  metadata: FrameMetadata;
  sessionId: number;
}

class TabStream implements LiveStream {
  private page?: Page;
  private cdp?: CDPSession;
  private detachPage?: () => void;
  private stopFollowing?: () => void;
  /** The frame the hub has not acknowledged yet, and the newest one Chromium sent meanwhile. */
  private inFlight?: ScreencastFrame;
  private waiting?: ScreencastFrame;
  private personHolds = false;
  private inputs: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly b: BrowserSession,
    private readonly size: { maxWidth: number; maxHeight: number },
    private readonly emit: (event: StreamEvent) => void,
    private readonly log: Logger,
  ) {}

  /** Follow the session's current tab: "switched" each time the agent moves to another. */
  follow(): void {
    this.stopFollowing = this.b.watchCurrent((page) => {
      if (!page) return this.end("the session has no tab open any more");
      void this.attach(page).then(() => this.announce("switched", page));
    });
  }

  async attach(page: Page): Promise<void> {
    if (this.closed || page === this.page) return;
    const held = this.personHolds;
    await this.detach();
    this.page = page;
    if (held) this.b.holdByPerson(page, true);
    const onNavigated = (frame: unknown) => frame === page.mainFrame() && void this.announce("navigated", page);
    const onLoad = () => void this.announce("navigated", page);
    const onClose = () => {
      // a followed session moves to its next tab (watchCurrent says which); a fixed tab ends the view
      if (!this.stopFollowing) this.end("the tab was closed");
    };
    page.on("framenavigated", onNavigated);
    page.on("load", onLoad);
    page.on("close", onClose);
    this.detachPage = () => {
      page.off("framenavigated", onNavigated);
      page.off("load", onLoad);
      page.off("close", onClose);
    };
    try {
      const cdp = (this.cdp = await page.context().newCDPSession(page));
      cdp.on("Page.screencastFrame", (frame) => this.frame(cdp, frame as ScreencastFrame));
      await cdp.send("Page.startScreencast", { format: "jpeg", quality: JPEG_QUALITY, ...this.size, everyNthFrame: 1 });
    } catch (err) {
      this.log.debug("screencast failed to start", { error: errorMessage(err) });
    }
  }

  private async detach(): Promise<void> {
    this.detachPage?.();
    this.detachPage = undefined;
    if (this.page && this.personHolds) this.b.holdByPerson(this.page, false);
    const cdp = this.cdp;
    this.cdp = undefined;
    this.inFlight = this.waiting = undefined;
    this.page = undefined;
    await cdp?.detach().catch(() => undefined);
  }

  private async announce(type: "navigated" | "switched", page: Page): Promise<void> {
    const title = await page.title().catch(() => "");
    if (this.closed || page !== this.page) return;
    if (type === "switched") this.emit({ type, tab: this.b.tabs().indexOf(page), url: page.url(), title });
    else this.emit({ type, url: page.url(), title });
  }

  private frame(cdp: CDPSession, frame: ScreencastFrame): void {
    if (cdp !== this.cdp) return;
    if (this.inFlight) {
      // latest wins: the frame it replaces is let go at once, so Chromium is never left waiting on it
      if (this.waiting) void cdp.send("Page.screencastFrameAck", { sessionId: this.waiting.sessionId }).catch(() => undefined);
      this.waiting = frame;
      return;
    }
    this.send(frame);
  }

  private send(frame: ScreencastFrame): void {
    this.inFlight = frame;
    this.emit({ type: "frame", data: frame.data, metadata: frame.metadata });
  }

  ack(): void {
    const done = this.inFlight;
    if (!done) return;
    this.inFlight = undefined;
    void this.cdp?.send("Page.screencastFrameAck", { sessionId: done.sessionId }).catch(() => undefined);
    const next = this.waiting;
    this.waiting = undefined;
    if (next) this.send(next);
  }

  control(holder: "person" | "agent"): void {
    this.personHolds = holder === "person";
    if (this.page) this.b.holdByPerson(this.page, this.personHolds);
  }

  input(event: LiveInputEvent): Promise<void> {
    // in order, one at a time: a click's down and up must not cross
    this.inputs = this.inputs.then(() => this.apply(event)).catch((err) => this.log.debug("live input failed", { error: errorMessage(err) }));
    return this.inputs;
  }

  private async apply(event: LiveInputEvent): Promise<void> {
    const page = this.page;
    if (!page || page.isClosed() || !this.personHolds) return;
    if (event.type === "text") return page.keyboard.insertText(event.text);
    if (event.type === "key") {
      // Playwright knows the key names the DOM gives (Enter, ArrowLeft, a, A…); one it does not is skipped
      return event.action === "down" ? page.keyboard.down(event.key) : page.keyboard.up(event.key);
    }
    await page.mouse.move(event.x, event.y);
    const options = { button: event.button ?? "left", clickCount: event.clickCount ?? 1 };
    if (event.action === "down") await page.mouse.down(options);
    else if (event.action === "up") await page.mouse.up(options);
    else if (event.action === "wheel") await page.mouse.wheel(event.deltaX ?? 0, event.deltaY ?? 0);
  }

  private end(why: string): void {
    if (this.closed) return;
    this.emit({ type: "closed", why });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopFollowing?.();
    await this.detach();
  }
}

export function browserLive(workspace: () => string, log: Logger): LiveProvider {
  return {
    async open(params: LiveOpenParams, emit) {
      const b = await browserSessionOf(params.session, workspace(), log);
      // a view of a session that has no tab yet shows the one it will use (opened blank)
      const page = params.tab === undefined ? await b.page({ allowDialog: true }) : b.tabAt(params.tab);
      const stream = new TabStream(b, { maxWidth: params.maxWidth, maxHeight: params.maxHeight }, emit, log);
      await stream.attach(page);
      if (params.tab === undefined) stream.follow();
      const opened = { kind: "browser" as const, tab: b.tabs().indexOf(page), url: page.url(), title: await page.title().catch(() => "") };
      return { opened, stream };
    },
  };
}
