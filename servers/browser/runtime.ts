// The browser server's shared pieces: one Chromium, one BrowserSession per client session, the
// tool definer that hands each tool its session, and the translation of Playwright's errors into
// messages the model can act on.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Page, Request } from "playwright-core";
import type { ZodRawShape } from "zod";
import stripAnsi from "strip-ansi";
import { errorMessage, type Logger } from "../lib/log.js";
import { SessionStore } from "../lib/session-state.js";
import { controlBackText, HELD_RETRY_AFTER_MS, heldByPersonText } from "../lib/live.js";
import { defineTool, reply, ToolError, type Tool, type ToolContext, type ToolDefinition } from "../lib/tool.js";
import { ChromiumHost, firstLine } from "./chromium.js";
import { BrowserSession } from "./session.js";

const DEFAULT_IDLE_MS = 30 * 60_000;
const SETTLE_MS = 5_000;

interface Runtime {
  host: ChromiumHost;
  store: SessionStore<BrowserSession>;
}
let runtime: Runtime | undefined;

function idleMs(): number {
  const value = Number(process.env.AGENTBOX_BROWSER_IDLE_MS);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_IDLE_MS;
}

/** Called from the server's setup with the server-wide workspace and logger. */
export function initRuntime(workspace: string, log: Logger): Runtime {
  const host = new ChromiumHost(log);
  const store = new SessionStore<BrowserSession>({
    create: (session) => new BrowserSession(host, workspace, log, session),
    dispose: async (b, session, reason) => {
      log.info("closing browser context", { session, reason });
      await b.dispose();
    },
    idleMs: idleMs(),
    describeAs: "tabs",
    describe: async (b) => Promise.all(b.tabs().map(async (page) => ({ url: page.url(), title: await page.title().catch(() => "") }))),
  });
  runtime = { host, store };
  return runtime;
}

function getRuntime(ctx: ToolContext): Runtime {
  return runtime ?? initRuntime(ctx.workspace, ctx.log);
}

/** A session's browser, for a live view of it (./live.ts). */
export function browserSessionOf(session: string, workspace: string, log: Logger): Promise<BrowserSession> {
  return (runtime ?? initRuntime(workspace, log)).store.get(session);
}

export function chromiumHost(ctx: ToolContext): ChromiumHost {
  return getRuntime(ctx).host;
}

export async function shutdownRuntime(): Promise<void> {
  if (!runtime) return;
  await runtime.store.releaseAll();
  await runtime.host.close();
}

type Args<S extends ZodRawShape> = Parameters<ToolDefinition<S>["run"]>[0];

export interface BrowserToolDefinition<S extends ZodRawShape> extends Omit<ToolDefinition<S>, "run"> {
  run(args: Args<S>, b: BrowserSession, ctx: ToolContext): Promise<CallToolResult>;
  /** Whether a call leaves the current tab alone (listing or switching tabs), so it runs while a person holds that tab. */
  sparesCurrentTab?(args: Args<S>): boolean;
}

/**
 * While a person holds the current tab through a live view, a call that would act on it does
 * nothing and says so (a held reply: the agent loses nothing by waiting); the first result after
 * the person hands back says that too, once.
 */
async function respectingPerson<S extends ZodRawShape>(def: BrowserToolDefinition<S>, args: Args<S>, b: BrowserSession, run: () => Promise<CallToolResult>) {
  if (b.isHeldByPerson(b.currentTab()) && !def.sparesCurrentTab?.(args)) return reply.held(heldByPersonText("tab"), HELD_RETRY_AFTER_MS);
  const back = b.takeHandedBack();
  const result = await run();
  return back ? { ...result, content: [{ type: "text" as const, text: controlBackText("tab") }, ...result.content] } : result;
}

/** defineTool, plus the session's browser and Playwright errors turned into actionable ones. */
export function browserTool<S extends ZodRawShape>(def: BrowserToolDefinition<S>): Tool {
  return defineTool<S>({
    ...def,
    async run(args, ctx) {
      // held busy for the whole call, so the idle sweep cannot close its context underneath a slow one
      try {
        return await getRuntime(ctx).store.use(ctx.session, (b) =>
          respectingPerson(def, args, b, async () => {
            try {
              return await def.run(args, b, ctx);
            } catch (err) {
              // Chromium died before the server read its exit, so the call ran against a dead browser and
              // anything it did went with it: run it once on a relaunched one (which says the tabs were lost)
              // rather than fail with "call again"
              if (!(isBrowserClosed(err) && b.browserLost)) throw err;
              return await def.run(args, b, ctx);
            }
          }),
        );
      } catch (err) {
        throw toToolError(err);
      }
    },
  });
}

/** Playwright's words for a page, context or browser that closed under a call. */
function isBrowserClosed(err: unknown): boolean {
  return /has been closed|Target closed|Browser closed|browser has disconnected/i.test(errorMessage(err));
}

export function toToolError(err: unknown): ToolError {
  if (err instanceof ToolError) return err;
  const message = stripAnsi(errorMessage(err));
  const head = firstLine(message).replace(/^\w+\.\w+: /, "");
  if (isBrowserClosed(err)) {
    return new ToolError(`The page or browser closed during the call (${head}). Call again: a crashed Chromium is relaunched.`);
  }
  if (/Timeout \d+ms exceeded/.test(message)) {
    const waiting = message.match(/waiting for (.+)/)?.[1];
    const detail = message.match(/- (element is not \w+|.*intercepts pointer events.*)/)?.[1];
    return new ToolError(
      `${head}${waiting ? ` (waiting for ${waiting})` : ""}${detail ? `: ${detail}` : ""}. The element may be hidden, disabled or covered; take a new snapshot.`,
    );
  }
  return new ToolError(head);
}

/**
 * Run an action and let the page settle: requests the action started finish (bounded), and a
 * navigation it caused reaches `load`. If the action opened a dialog, return at once.
 */
export async function perform(b: BrowserSession, page: Page, action: () => Promise<unknown>): Promise<void> {
  const inflight = new Set<Request>();
  const started = (r: Request) => inflight.add(r);
  const done = (r: Request) => inflight.delete(r);
  let navigated = false;
  const onNavigate = (frame: unknown) => (navigated ||= frame === page.mainFrame());
  page.on("request", started);
  page.on("requestfinished", done);
  page.on("requestfailed", done);
  page.on("framenavigated", onNavigate);
  const opened = await windowOpens(page);
  const openedBefore = opened.count;
  const tabsBefore = b.tabCount;
  try {
    const { dialog } = await b.act(action);
    if (dialog) return;
    // Give the page a moment to react (start a navigation, a fetch, a download): two frames let
    // its handlers run; a page that never paints still only costs the 100 ms cap.
    const twoFrames = () => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())));
    await Promise.race([sleep(100), page.evaluate(twoFrames).catch(() => undefined)]);
    const deadline = Date.now() + SETTLE_MS;
    while (inflight.size > 0 && !b.dialog && Date.now() < deadline) await sleep(50);
    // a new tab is announced by Playwright only once its renderer is up, often after the result
    // would be sent: Chromium's own windowOpen event says one is coming, so wait for it to be adopted
    const expected = tabsBefore + (opened.count - openedBefore);
    while (b.tabCount < expected && Date.now() < deadline) await sleep(20);
    if (navigated && !b.dialog) await page.waitForLoadState("load", { timeout: SETTLE_MS }).catch(() => undefined);
  } finally {
    page.off("request", started);
    page.off("requestfinished", done);
    page.off("requestfailed", done);
    page.off("framenavigated", onNavigate);
  }
}

const windowOpenCounters = new WeakMap<Page, Promise<{ count: number }>>();

/** How many tabs or windows the page has asked to open (CDP Page.windowOpen), counted from now on. */
function windowOpens(page: Page): Promise<{ count: number }> {
  let counter = windowOpenCounters.get(page);
  if (!counter) {
    counter = (async () => {
      const seen = { count: 0 };
      try {
        const cdp = await page.context().newCDPSession(page);
        cdp.on("Page.windowOpen", () => void seen.count++);
        await cdp.send("Page.enable");
      } catch {
        // a page that closed meanwhile opens nothing
      }
      return seen;
    })();
    windowOpenCounters.set(page, counter);
  }
  return counter;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
