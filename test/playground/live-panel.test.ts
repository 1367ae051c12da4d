// The playground's Live panel, in real Chromium: the page drives its browser to a loopback page
// with its own browser_navigate form, the result offers "Watch live", and the view (the hub's
// /live/<token> page, framed in the playground) draws the tab's frames; the panel lists the tab
// and a terminal the page opened, whose view shows its output. The page's hub_live_view calls are
// its bookkeeping: out of the log a person reads. Screenshots at 1280×800 and 800×600.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test, type TestContext } from "node:test";
import type { Browser, FrameLocator, Page } from "playwright-core";
import { startHub, type TestHub } from "../helpers/hub.js";
import { until } from "../helpers/wait.js";
import { launch, screenshotPath } from "./browser.js";

// a page that changes every 100 ms (a screencast sends frames only while the page changes), a green block
const APP = `<!doctype html><html><head><meta charset="utf-8"><title>Watched app</title>
<style>body{margin:0}#tick{position:fixed;left:20px;top:20px;font:20px sans-serif}
#block{position:fixed;left:0;top:100px;width:1280px;height:600px;background:rgb(20,160,40)}</style></head><body>
<p id="tick">tick 0</p><div id="block"></div>
<script>let n = 0; setInterval(() => { document.getElementById("tick").textContent = "tick " + ++n; }, 100);</script>
</body></html>`;

async function run(page: Page, tool: string, fill: (panel: ReturnType<Page["locator"]>) => Promise<void> = async () => undefined) {
  await page.click(`.sidebar button[data-tool="${tool}"]`);
  const panel = page.locator(`#tool-${tool}`);
  await fill(panel);
  await panel.locator('[data-action="run"]').click();
  await panel.locator('.result[data-state="ok"]').waitFor({ timeout: 60_000 });
  return panel;
}

/** The framed view's own state (hub/live/web: window.liveView). */
const viewState = (frame: FrameLocator) =>
  frame.locator("body").evaluate(() => (window as unknown as { liveView?: { frames: number; kind: string } }).liveView ?? { frames: 0, kind: "" });

describe("the playground's Live panel", () => {
  let hub: TestHub;
  let browser: Browser;
  let app: http.Server;
  let appUrl: string;
  let page: Page;
  const errors: string[] = [];

  async function shot(t: TestContext, name: string): Promise<void> {
    for (const size of [
      { width: 1280, height: 800 },
      { width: 800, height: 600 },
    ]) {
      await page.setViewportSize(size);
      const file = screenshotPath(`${name}-${size.width}x${size.height}`);
      await page.screenshot({ path: file });
      t.diagnostic(`screenshot: ${file}`);
    }
  }

  before(async () => {
    app = http.createServer((_req, res) => res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(APP));
    await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
    appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/`;
    [hub, browser] = await Promise.all([startHub({ servers: ["browser", "terminal"] }), launch()]);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
    page.on("console", (msg) => {
      if (msg.type() === "error" && !/favicon/.test(msg.text())) errors.push(`console: ${msg.text()}`);
    });
    await page.goto(`${hub.origin}/playground`);
    await page.locator('.pill[data-state="connected"]').waitFor({ timeout: 30_000 });
  });
  after(() => Promise.all([browser?.close(), hub?.stop(), new Promise((resolve) => app?.close(resolve))]));

  test("a browser tool's result opens the tab's live view in the page, and frames arrive", async (t) => {
    const panel = await run(page, "browser_navigate", (p) => p.locator('[name="url"]').fill(appUrl));
    const watch = panel.locator('.result [data-action="watch-live"]');
    await watch.waitFor();
    // the panel listed the tab once the browser tool ran
    await page.locator('.live-entry[data-kind="browser"][data-tab="0"]').waitFor({ timeout: 30_000 });
    await watch.click();
    const viewer = page.locator('.live-viewer[data-kind="browser"]');
    await viewer.waitFor();
    const frame = page.frameLocator(".live-viewer iframe.live-frame");
    await until("the framed view to draw frames of the tab", async () => (await viewState(frame)).frames >= 2, 30_000);
    // the canvas shows the agent's page: its green block
    const colour = await frame.locator("#screen").evaluate((el) => {
      const canvas = el as HTMLCanvasElement;
      const d = canvas.getContext("2d")!.getImageData(Math.round(canvas.width / 2), Math.round(canvas.height * 0.6), 1, 1).data;
      return [d[0], d[1], d[2]];
    });
    assert.ok(
      colour.every((v, i) => Math.abs(v - [20, 160, 40][i]) < 40),
      `the view's canvas shows the page's green block (got ${colour.join(",")})`,
    );
    assert.match((await viewer.locator("a[target=_blank]").getAttribute("href")) ?? "", new RegExp(`^${hub.origin}/live/[a-z0-9-]+$`));
    await shot(t, "live-browser");
    await page.setViewportSize({ width: 1280, height: 800 });
    // bookkeeping: the log a person reads shows their navigate, not the page's own live view calls
    const log = await page.locator("#log .log-list").innerText();
    assert.match(log, /browser_navigate/);
    assert.doesNotMatch(log, /hub_live_view|browser_tabs/);
    await viewer.locator('[data-action="close-live"]').click();
    assert.equal(await page.locator(".live-viewer").count(), 0);
  });

  test("a terminal the page opened is listed, and its view shows the output", async (t) => {
    const created = await run(page, "terminal_session_create");
    const id = /Terminal (t[0-9a-f]+) started/.exec(await created.locator(".result").innerText())?.[1];
    assert.ok(id);
    await run(page, "terminal_session_send", async (p) => {
      await p.locator('[name="id"]').fill(id);
      await p.locator('[name="input"]').fill("echo watched-$((40+2))\n");
      await p.locator('[name="waitFor"]').fill("watched-42");
    });
    const entry = page.locator(`.live-entry[data-kind="terminal"][data-terminal="${id}"]`);
    await entry.waitFor({ timeout: 30_000 });
    await entry.locator('[data-action="watch"]').click();
    await page.locator('.live-viewer[data-kind="terminal"]').waitFor();
    const frame = page.frameLocator(".live-viewer iframe.live-frame");
    await frame.locator(".xterm-rows", { hasText: "watched-42" }).waitFor({ timeout: 30_000 });
    await shot(t, "live-terminal");
    assert.deepEqual(errors, []);
  });
});
