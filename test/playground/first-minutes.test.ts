// What a newcomer meets in the playground, in real Chromium (issue 28): a catalog picker that looks
// like one, a long call's whole output kept after Cancel, server states that follow the calls
// that start servers, a layout that works at 800 px, and a heading true to the selection.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { startHub, type TestHub } from "../helpers/hub.js";
import { launch, openPage } from "./browser.js";

const shot = (name: string) => path.join(os.tmpdir(), `agentbox-playground-${name}.png`);

async function connected(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.locator('.pill[data-state="connected"]').waitFor({ timeout: 30_000 });
}

describe("the playground's first minutes", () => {
  let hub: TestHub, browser: Browser, page: Page, errors: string[];
  before(async () => {
    // lazy start, as `npm start` runs: servers start on their first call
    [hub, browser] = await Promise.all([startHub({ servers: ["file", "terminal"], env: { AGENTBOX_START: "lazy" } }), launch()]);
    ({ page, errors } = await openPage(browser));
  });
  after(() => Promise.all([browser?.close(), hub?.stop()]));

  // first, before other pages' sessions end: a session's end sweeps the tenant's processes, and a
  // sweep that runs while a server starts can take it for an escapee (see hub/tenants/sweeper.ts)
  test("a call that starts its server shows the server running as soon as the result is there", async () => {
    await connected(page, `${hub.origin}/playground`);
    const card = page.locator('.server[data-server="terminal"]');
    assert.equal(await card.locator(".state").textContent(), "idle");
    assert.match((await card.locator(".server-meta").textContent()) ?? "", /^no process/);
    await page.click('.sidebar button[data-tool="terminal_exec"]');
    const panel = page.locator("#tool-terminal_exec");
    await panel.locator('[name="command"]').fill("echo started");
    await panel.locator('[data-action="run"]').click();
    await panel.locator('.result[data-state="ok"]').waitFor({ timeout: 60_000 });
    // no wait: the page refreshed the servers' states before it showed the outcome
    assert.equal(await card.locator(".state").textContent(), "ready");
    assert.match((await card.locator(".server-meta").textContent()) ?? "", /^pid \d+/);
  });

  test("the heading says what the session selected", async () => {
    await connected(page, `${hub.origin}/playground`);
    assert.equal(await page.locator(".welcome h1").textContent(), "Try every tool of this hub");
    await connected(page, `${hub.origin}/playground?servers=file`);
    assert.equal(await page.locator(".welcome h1").textContent(), "Try the tools of file");
    await connected(page, `${hub.origin}/playground?tools=terminal_exec,file_read`);
    assert.equal(await page.locator(".welcome h1").textContent(), "Try the tools matching terminal_exec, file_read");
    await connected(page, `${hub.origin}/playground?servers=terminal&catalog=search`);
    assert.equal(await page.locator(".welcome h1").textContent(), "Find and try the tools of terminal");
  });

  test("the catalog picker reads as a control to open, naming the current choice", async () => {
    await connected(page, `${hub.origin}/playground?servers=file`);
    const summary = page.locator(".catalog-picker summary");
    assert.equal(await summary.locator(".picker-choice").textContent(), "servers file");
    assert.ok(await summary.locator(".picker-change").isVisible(), "a visible 'Change' says it opens");
    const border = await summary.evaluate((el) => getComputedStyle(el).borderTopWidth);
    assert.notEqual(border, "0px", "drawn as a box, not as a bare header");
    // closed when the page selects nothing: the chevron says it opens, and a click does
    await connected(page, `${hub.origin}/playground`);
    assert.equal(await summary.locator(".picker-choice").textContent(), "all tools");
    assert.match((await summary.locator(".picker-change").evaluate((el) => getComputedStyle(el, "::after").content)) ?? "", /▾/);
    assert.equal(await page.locator('[data-action="apply-selection"]').isVisible(), false);
    await summary.click();
    assert.ok(await page.locator('[data-action="apply-selection"]').isVisible());
    assert.match((await summary.locator(".picker-change").evaluate((el) => getComputedStyle(el, "::after").content)) ?? "", /▴/);
    await page.screenshot({ path: shot("picker") });
  });

  test("a long call's whole output streams in and stays after Cancel", async () => {
    await connected(page, `${hub.origin}/playground`);
    await page.click('.sidebar button[data-tool="terminal_exec"]');
    const panel = page.locator("#tool-terminal_exec");
    await panel.locator('[name="command"]').fill("for i in 1 2 3 4; do echo chunk-$i; sleep 0.4; done; sleep 30");
    await panel.locator('[data-action="run"]').click();
    const live = panel.locator(".result .stream-output");
    await live.filter({ hasText: "chunk-4" }).waitFor({ timeout: 30_000 });
    assert.match((await live.textContent()) ?? "", /chunk-1\s+chunk-2\s+chunk-3\s+chunk-4/, "every piece, not only the latest");
    await page.screenshot({ path: shot("streaming") });
    await panel.locator('[data-action="cancel"]').click();
    await panel.locator('.result[data-state="cancelled"]').waitFor();
    assert.match(
      (await panel.locator(".result .kind-stream .stream-output").textContent()) ?? "",
      /chunk-1\s+chunk-2\s+chunk-3\s+chunk-4/,
      "kept after Cancel",
    );
    await page.screenshot({ path: shot("cancelled") });
  });

  test("at 800 px the servers table fits, nothing scrolls sideways, and the log keeps room", async () => {
    const narrow = await browser.newContext({ viewport: { width: 800, height: 600 } });
    const small = await narrow.newPage();
    try {
      await connected(small, `${hub.origin}/playground`);
      const main = (await small.locator("main.main").boundingBox())!;
      const table = (await small.locator(".overview").boundingBox())!;
      assert.ok(table.x + table.width <= main.x + main.width, `the table (to x=${table.x + table.width}) fits the main column (to x=${main.x + main.width})`);
      assert.equal(await small.locator(".overview-wrap").evaluate((el) => el.scrollWidth <= el.clientWidth), true, "nothing of the table is cut off");
      assert.equal(await small.evaluate(() => document.documentElement.scrollWidth), 800, "the page does not scroll sideways");
      const log = (await small.locator(".log-panel").boundingBox())!;
      assert.ok(log.height >= 180, `the log has room (${log.height} px)`);
      assert.ok(main.width >= 500, `the main column is usable (${main.width} px)`);
      for (const column of ["Server", "State", "Process", "Tools"]) assert.ok(await small.locator(".overview th", { hasText: column }).isVisible(), column);
      await small.screenshot({ path: shot("800") });
      await small.click('.sidebar button[data-tool="terminal_exec"]');
      const form = (await small.locator("#tool-terminal_exec .tool-form").boundingBox())!;
      assert.ok(form.x + form.width <= main.x + main.width + 1, "a tool's form fits too");
      await small.screenshot({ path: shot("800-tool") });
    } finally {
      await narrow.close();
    }
    assert.deepEqual(
      errors.filter((e) => e.startsWith("pageerror")),
      [],
    );
  });
});
