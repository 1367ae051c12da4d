// The one Chromium every client session shares. It starts on the first browser call, exposes a
// CDP endpoint on loopback so other tools can attach, and is relaunched after a crash; the
// generation number lets sessions notice that their contexts died with the old process.
import fs from "node:fs";
import type { Browser } from "playwright-core";
import { errorMessage, type Logger } from "../lib/log.js";
import { ToolError } from "../lib/tool.js";

// Debian's Chromium; the image ships the smaller headless shell instead.
const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-headless-shell"];

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
  "--remote-debugging-address=127.0.0.1",
];

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

  constructor(private readonly log: Logger) {}

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
    const port = Number(process.env.AGENTBOX_CDP_PORT ?? "0");
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ToolError(`AGENTBOX_CDP_PORT must be a port number (0 picks a free one), got "${process.env.AGENTBOX_CDP_PORT}".`);
    let browser: Browser;
    try {
      // playwright-core is loaded with the first launch: an idle browser server stays small and quick to start
      const { chromium } = await import("playwright-core");
      browser = await chromium.launch({
        executablePath,
        headless: true,
        args: [...ARGS, `--remote-debugging-port=${port}`],
      });
    } catch (err) {
      throw new ToolError(`Chromium (${executablePath}) failed to start: ${firstLine(errorMessage(err))}`);
    }
    this.generation += 1;
    this.current = browser;
    const generation = this.generation;
    browser.on("disconnected", () => {
      if (this.current === browser) this.current = undefined;
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
      if (cmdline.some((a) => a.startsWith("--remote-debugging-port"))) return Number(entry);
    }
    return undefined;
  }

  /**
   * The CDP endpoint. Playwright chooses the profile folder, so we read it from the browser's
   * command line and take the port Chromium wrote to DevToolsActivePort there.
   */
  async endpoint(): Promise<CdpEndpoint> {
    const browser = await this.browser();
    const pid = this.pid();
    const cmdline = pid ? (safeRead(`/proc/${pid}/cmdline`)?.split("\0") ?? []) : [];
    const profile = cmdline.find((a) => a.startsWith("--user-data-dir="))?.slice("--user-data-dir=".length);
    const active = profile ? safeRead(`${profile}/DevToolsActivePort`) : undefined;
    const port = Number(active?.split("\n")[0]);
    if (!Number.isInteger(port) || port <= 0) throw new ToolError("Chromium did not report its DevTools port; the CDP endpoint is unavailable.");
    const res = await fetch(`http://127.0.0.1:${port}/json/version`);
    const version = (await res.json()) as { webSocketDebuggerUrl: string; Browser: string };
    return { port, webSocketDebuggerUrl: version.webSocketDebuggerUrl, browserVersion: version.Browser ?? browser.version(), pid };
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
