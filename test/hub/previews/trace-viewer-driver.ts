// A person at Playwright's trace viewer, for the trace viewer tests: open a trace, select actions
// and their Before / Action / After tabs so each snapshot renders, and wait until what they load has
// loaded. Also Playwright's viewer as it ships (no hub around it) on a loopback server of its own.
import fs from "node:fs";
import http from "node:http";
import type net from "node:net";
import path from "node:path";
import { createRequire } from "node:module";
import type { Frame, Page } from "playwright-core";

const TABS = ["Before", "Action", "After"] as const;

export async function openViewer(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.locator(".action-title").first().waitFor({ timeout: 60_000 });
}

/** Select a tab of the selected action; the snapshot's frame once it has loaded (the viewer draws into two frames by turns). */
async function showTab(page: Page, tab: (typeof TABS)[number], select: () => Promise<void>): Promise<Frame> {
  const loaded = page.waitForEvent("framenavigated", {
    predicate: (f) => f.url().includes("/trace-viewer/snapshot/") && f.url().includes(`phase=${tab.toLowerCase()}`),
    timeout: 60_000,
  });
  await select();
  const frame = await loaded;
  await frame.waitForLoadState("load").catch(() => undefined);
  return frame;
}

/**
 * Each action whose title matches, each of its three snapshots shown in turn; `onShown` gets each
 * snapshot's frame and may act in it. The titles of the actions visited.
 */
export async function visitSnapshots(
  page: Page,
  actions: RegExp,
  onShown: (frame: Frame, action: string, tab: string) => Promise<void> = async () => undefined,
): Promise<string[]> {
  const items = page.locator(".action-title");
  const titles = await items.allTextContents();
  const visited: string[] = [];
  for (const [i, title] of titles.entries()) {
    if (!actions.test(title)) continue;
    await items.nth(i).click();
    for (const tab of TABS) {
      const frame = await showTab(page, tab, () => page.getByRole("tab", { name: tab, exact: true }).click());
      await onShown(frame, title, tab);
    }
    visited.push(title);
  }
  return visited;
}

/** Until every frame of the page has loaded what it was loading. */
export async function settled(page: Page): Promise<void> {
  for (const frame of page.frames()) await frame.waitForLoadState("load").catch(() => undefined);
}

/** playwright-core's trace viewer, unchanged, with one trace at /trace.zip, on a loopback origin of its own. */
export async function serveStockViewer(trace: Buffer): Promise<{ origin: string; close(): Promise<void> }> {
  const dir = path.join(path.dirname(createRequire(import.meta.url).resolve("playwright-core/package.json")), "lib", "vite", "traceViewer");
  const types: Record<string, string> = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".ttf": "font/ttf" };
  const server = http.createServer((req, res) => {
    const { pathname } = new URL(req.url ?? "/", "http://viewer");
    if (pathname === "/trace.zip") return void res.writeHead(200, { "Content-Type": "application/zip" }).end(trace);
    const file = path.join(dir, pathname.replace(/^\/trace-viewer\//, ""));
    if (!pathname.startsWith("/trace-viewer/") || !file.startsWith(dir + path.sep) || !fs.statSync(file, { throwIfNoEntry: false })?.isFile())
      return void res.writeHead(404).end();
    res.writeHead(200, { "Content-Type": types[path.extname(file)] ?? "application/octet-stream" }).end(fs.readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
