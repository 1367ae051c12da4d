// The one Chromium every client session shares. It starts on the first browser call and is
// relaunched after a crash; the generation number lets sessions notice that their contexts died
// with the old process. Playwright drives it over a pipe: a CDP port would let any local process
// attach and read every session's pages and cookies, so one is opened only when the operator
// sets AGENTBOX_CDP_PORT.
import fs from "node:fs";
import type { Browser } from "playwright-core";
import { errorMessage, type Logger } from "../lib/log.js";
import { ToolError } from "../lib/tool.js";
import { defaultTempRoots, launchFailureReason, makeChromiumTemp, removeChromiumTemp } from "./chromium-launch.js";

// Debian's Chromium; the image ships the smaller headless shell instead.
const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-headless-shell"];

// Chromium honours only the last --disable-features switch, and Playwright passes one of its own
// before ours: ours repeats Playwright's list (playwright-core 1.65, chromiumSwitches.ts) so that
// adding features does not switch those back on. test/browser/chromium-features.test.ts fails when
// an upgrade of playwright-core adds one this list lacks.
const PLAYWRIGHT_DISABLED_FEATURES = [
  "AvoidUnnecessaryBeforeUnloadCheckSync",
  "DestroyProfileOnBrowserClose",
  "HttpsUpgrades",
  "HttpsFirstBalancedModeAutoEnable",
  "LensOverlay",
  "MediaRouter",
  "PaintHolding",
  "ThirdPartyStoragePartitioning",
  "AvoidCorsURLLoaderRestartOnRedirect",
  "TcpPortRandomizationWin",
  "OptimizationHints",
  "NetworkTimeServiceQuerying",
  "AimEnabled",
  "PreconnectToSearch",
  "msForceBrowserSignIn",
  "msEdgeUpdateLaunchServicesPreferredVersion",
];

// Full Chromium (not the headless shell) preloads its omnibox popup, a WebUI page, for every
// browser context: a renderer process per client session that nobody sees, as large as the
// session's own page (issue 41, bench/README.md table 14). No tool uses the omnibox.
export const UNUSED_UI_FEATURES = ["WebUIOmniboxPopup", "WebUIOmniboxAimPopup"];

// This machine's network is closed: without these Chromium keeps dialing Google services.
const ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
  // what enforces the Connection-Allowlist header workspace pages carry (./workspace-origin.ts): on
  // by default in Chromium 156, a prototype behind this switch before. Chromium merges the switch
  // with Playwright's own --enable-features
  "--enable-features=ConnectionAllowlists",
  `--disable-features=${[...PLAYWRIGHT_DISABLED_FEATURES, ...UNUSED_UI_FEATURES].join(",")}`,
];

/** The operator's CDP port (AGENTBOX_CDP_PORT), or undefined when the endpoint is off. */
export function cdpPort(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env.AGENTBOX_CDP_PORT?.trim();
  if (!raw) return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ToolError(`AGENTBOX_CDP_PORT must be a port number from 1 to 65535, got "${raw}"; unset it to keep the CDP endpoint off.`);
  }
  return port;
}

export const CDP_OFF_MESSAGE =
  "The CDP endpoint is off: Chromium is driven over a pipe and listens on no port. An operator can turn it on by starting agentbox with AGENTBOX_CDP_PORT=<port> (Chromium then listens on 127.0.0.1:<port>, browser-wide: every session's pages and cookies are visible there).";

export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.AGENTBOX_CHROMIUM_PATH;
  if (configured) {
    if (!fs.existsSync(configured)) throw new ToolError(`AGENTBOX_CHROMIUM_PATH points to ${configured}, which does not exist.`);
    return configured;
  }
  const found = CANDIDATES.find((p) => fs.existsSync(p));
  if (!found) throw new ToolError(`No Chromium found (looked for ${CANDIDATES.join(", ")}); install it or set AGENTBOX_CHROMIUM_PATH.`);
  return found;
}

export interface CdpEndpoint {
  port: number;
  webSocketDebuggerUrl: string;
  browserVersion: string;
  pid?: number;
}

export class ChromiumHost {
  private launching?: Promise<Browser>;
  private current?: Browser;
  /** Bumped on every launch; a context created under an older generation is gone. */
  generation = 0;

  /** @param tempRoots where Chromium's private temp folder may go (./chromium-launch.ts), first that takes one */
  constructor(
    private readonly log: Logger,
    private readonly tempRoots: readonly string[] = defaultTempRoots(),
  ) {}

  /** The running browser, launched (or relaunched after a crash) on demand. */
  async browser(): Promise<Browser> {
    if (this.current?.isConnected()) return this.current;
    this.launching ??= this.launch().finally(() => (this.launching = undefined));
    return this.launching;
  }

  /** True when Chromium is up and was launched under the given generation. */
  alive(generation: number): boolean {
    return Boolean(this.current?.isConnected()) && generation === this.generation;
  }

  private async launch(): Promise<Browser> {
    const executablePath = chromiumPath();
    const port = cdpPort();
    const cdpArgs = port === undefined ? [] : [`--remote-debugging-port=${port}`, "--remote-debugging-address=127.0.0.1"];
    const temp = makeChromiumTemp(this.tempRoots);
    let browser: Browser;
    try {
      // playwright-core is loaded with the first launch: an idle browser server stays small and quick to start
      const { chromium } = await import("playwright-core");
      browser = await chromium.launch({
        executablePath,
        headless: true,
        args: [...ARGS, ...cdpArgs],
        ...(temp && { env: { ...process.env, TMPDIR: temp } }),
      });
    } catch (err) {
      removeChromiumTemp(temp);
      // Playwright's first line is only "browser has been closed": Chromium's stderr says why
      const message = errorMessage(err);
      const reason = launchFailureReason(message);
      throw new ToolError(`Chromium (${executablePath}) failed to start: ${reason ?? firstLine(message)}`);
    }
    this.generation += 1;
    this.current = browser;
    const generation = this.generation;
    browser.on("disconnected", () => {
      if (this.current === browser) this.current = undefined;
      removeChromiumTemp(temp);
      this.log.warn("chromium disconnected", { generation });
    });
    this.log.info("chromium launched", { executablePath, version: browser.version(), generation });
    return browser;
  }

  /** The Chromium main process: our direct child whose command line is the browser (not a renderer). */
  pid(): number | undefined {
    for (const entry of safeReaddir("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = safeRead(`/proc/${entry}/stat`);
      if (!stat) continue;
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid !== process.pid) continue;
      const cmdline = safeRead(`/proc/${entry}/cmdline`)?.split("\0") ?? [];
      if (cmdline.some((a) => a.startsWith("--remote-debugging-"))) return Number(entry);
    }
    return undefined;
  }

  /**
   * The operator's CDP endpoint, or undefined when it is off. The port is the configured one:
   * Chromium writes DevToolsActivePort only for a port it picked itself.
   */
  async endpoint(): Promise<CdpEndpoint | undefined> {
    const port = cdpPort();
    const browser = await this.browser();
    if (port === undefined) return undefined;
    let version: { webSocketDebuggerUrl: string; Browser?: string };
    try {
      version = (await (await fetch(`http://127.0.0.1:${port}/json/version`)).json()) as typeof version;
    } catch (err) {
      throw new ToolError(
        `Chromium's CDP endpoint on 127.0.0.1:${port} (AGENTBOX_CDP_PORT) does not answer: ${firstLine(errorMessage(err))}. Is the port taken by another program?`,
      );
    }
    return { port, webSocketDebuggerUrl: version.webSocketDebuggerUrl, browserVersion: version.Browser ?? browser.version(), pid: this.pid() };
  }

  async close(): Promise<void> {
    const browser = this.current;
    this.current = undefined;
    await browser?.close().catch(() => undefined);
  }
}

export function firstLine(text: string): string {
  return text.split("\n")[0];
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function safeRead(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
