// Real Chromium (Debian's) driven by playwright-core, for the playground's end-to-end tests.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

export const CHROMIUM = process.env.AGENTBOX_TEST_CHROMIUM ?? "/usr/bin/chromium";

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
    ],
  });
}

/** A fresh page (own context: own sessionStorage) that records page errors and CSP violations. */
export async function openPage(browser: Browser): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 860 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error") errors.push(`console: ${msg.text()}`);
  });
  return { page, errors };
}

/**
 * Where a test writes a screenshot for a reviewer to look at: $AGENTBOX_TEST_OUTPUT, or
 * agentbox-test-output in the system's temporary folder. The test prints the path in its log.
 */
export function screenshotPath(name: string): string {
  const dir = process.env.AGENTBOX_TEST_OUTPUT ?? path.join(os.tmpdir(), "agentbox-test-output");
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, `playground-${name}.png`);
}
