// The playground's previews panel, in real Chromium: once the page's session opens a preview
// (hub_preview from its tool panel), the panel links to it, and the link opens the app in a new tab
// with no way back to the page.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { startHub, type TestHub } from "../helpers/hub.js";
import { freePort, startApp } from "../hub/previews/apps.js";
import { launch } from "./browser.js";

const KEY = `alice-${randomBytes(12).toString("hex")}`;

describe("the playground's previews panel", () => {
  let hub: TestHub;
  let browser: Browser;
  let page: Page;
  let port: number;

  before(async () => {
    [hub, browser] = await Promise.all([startHub({ servers: ["terminal"], config: { tenants: { alice: { apiKey: KEY } } } }), launch()]);
    const agent = await hub.connect({ headers: { Authorization: `Bearer ${KEY}` } });
    port = await freePort();
    await startApp(agent, port, "app-in-playground");
    const context = await browser.newContext({ viewport: { width: 1360, height: 860 } });
    await context.addInitScript((k) => sessionStorage.setItem("agentbox.apiKey", k), KEY);
    page = await context.newPage();
    await page.goto(`${hub.origin}/playground`);
    await page.locator('.pill[data-state="connected"]').waitFor({ timeout: 30_000 });
  });
  after(() => Promise.all([browser?.close(), hub?.stop()]));

  test("lists none, then a link to the preview the page's session opened, which opens the app", async () => {
    await page.locator('.previews-panel[data-state="ok"]').waitFor();
    // empty, it is folded to its title line; unfolded, it says how to open one
    assert.equal(await page.locator(".previews-list").isVisible(), false);
    await page.click(".previews-panel .side-summary .picker-label");
    assert.match((await page.locator(".previews-list").innerText()) ?? "", /None: an agent opens one with hub_preview/);
    await page.click(".previews-panel .side-summary .picker-label");
    await page.click('.sidebar button[data-tool="hub_preview"]');
    const panel = page.locator("#tool-hub_preview");
    await panel.locator('[name="port"]').fill(String(port));
    await panel.locator('[data-action="run"]').click();
    await panel.locator('.result[data-state="ok"]').waitFor({ timeout: 30_000 });
    // the panel unfolds once it has a preview to show
    const link = page.locator(`.preview-entry[data-port="${port}"] a`).first();
    await link.waitFor();
    assert.equal(await link.getAttribute("rel"), "noopener noreferrer");
    const [tab] = await Promise.all([page.context().waitForEvent("page"), link.click()]);
    await tab.waitForLoadState();
    assert.match(await tab.content(), /page of app-in-playground/);
    assert.equal(await tab.evaluate(() => window.opener), null);
  });
});
