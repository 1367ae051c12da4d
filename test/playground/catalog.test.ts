// The playground's catalog picker in real Chromium: a person picks servers, tools or search mode,
// the page connects with those URL parameters, and shows what the resulting tools/list costs.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { startHub, type TestHub } from "../helpers/hub.js";
import { connectModern } from "../hub/modern/modern-client.js";
import { launch, openPage } from "./browser.js";

async function connected(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.locator('.pill[data-state="connected"]').waitFor({ timeout: 30_000 });
}

const bytesShown = async (page: Page) => Number(await page.locator(".catalog-size").getAttribute("data-bytes"));
const toolsShown = (page: Page) => page.locator(".sidebar button[data-tool]").evaluateAll((els) => els.map((e) => e.getAttribute("data-tool")!).sort());

/** Ask hub_find_tools for a shell tool and wait for terminal_exec to join the sidebar. */
async function findShellTool(page: Page): Promise<void> {
  await page.click('.sidebar button[data-tool="hub_find_tools"]');
  const panel = page.locator("#tool-hub_find_tools");
  await panel.locator('[name="query"]').fill("run a shell command");
  await panel.locator('[data-action="run"]').click();
  await page.locator('.sidebar button[data-tool="terminal_exec"]').waitFor({ timeout: 30_000 });
}

describe("playground catalog picker", () => {
  // a hub with two servers is enough: the picker only needs something to leave out
  let hub: TestHub, browser: Browser, page: Page, errors: string[];
  before(async () => {
    [hub, browser] = await Promise.all([startHub({ servers: ["file", "terminal"] }), launch()]);
    ({ page, errors } = await openPage(browser));
  });
  after(() => Promise.all([browser?.close(), hub?.stop()]));

  test("shows the full catalog's size, then connects with the servers a person picks", async () => {
    await connected(page, `${hub.origin}/playground`);
    const full = await bytesShown(page);
    // the page speaks 2026-07-28 (auto mode): the size is that of the list such a client reads
    const client = await connectModern(hub, { mode: "auto" });
    const fullList = await client.listTools();
    await client.close();
    assert.equal(full, Buffer.byteLength(JSON.stringify({ tools: fullList.tools })), "the size is that of tools/list");
    assert.match((await page.locator(".catalog-size").textContent()) ?? "", new RegExp(`${fullList.tools.length} tools · [\\d.]+ KB · ~[\\d,]+ tokens`));

    await page.locator(".catalog-picker summary").click();
    await page.locator('.catalog-servers input[value="file"]').uncheck();
    await page.locator('[data-action="apply-selection"]').click();
    await page.waitForURL(/\/playground\?servers=terminal$/);
    await page.locator('.pill[data-state="connected"]').waitFor({ timeout: 30_000 });
    const listed = await toolsShown(page);
    assert.ok(listed.length > 0 && listed.every((t) => t.startsWith("terminal_") || t.startsWith("hub_")), listed.join(","));
    assert.ok((await bytesShown(page)) < full);
    assert.equal(await page.locator(".catalog-url").textContent(), "/mcp?servers=terminal");
  });

  test("search mode starts small and grows as hub_find_tools finds tools (2025-11-25: the session's list grows)", async () => {
    await connected(page, `${hub.origin}/playground?catalog=search&protocol=legacy`);
    const start = await bytesShown(page);
    // the hub's own tools with their output schemas (docs/clients.md, "Choosing the tools of a session"), not the ~84 KB of all
    assert.ok(start > 0 && start < 20_000, `${start} bytes`);
    assert.match((await page.locator(".search-hint").textContent()) ?? "", /hub_find_tools/);
    await findShellTool(page);
    await page.waitForFunction((before) => Number(document.querySelector(".catalog-size")?.getAttribute("data-bytes")) > before, start);
  });

  test("in 2026-07-28 search mode the page keeps what hub_find_tools found (no session list to grow) and can run it", async () => {
    await connected(page, `${hub.origin}/playground?catalog=search`);
    const start = await bytesShown(page);
    await findShellTool(page);
    // the model read the found tools' definitions in hub_find_tools' answer: the card counts them with the list
    assert.ok((await bytesShown(page)) > start, "the found tools are counted");
    assert.equal(Number(await page.locator(".catalog-size").getAttribute("data-tools")), (await toolsShown(page)).length);
    await page.click('.sidebar button[data-tool="terminal_exec"]');
    const panel = page.locator("#tool-terminal_exec");
    await panel.locator('[name="command"]').fill("echo found-and-run");
    await panel.locator('[data-action="run"]').click();
    await panel.locator('.result[data-state="ok"]').waitFor({ timeout: 60_000 });
    assert.match((await panel.locator(".result .kind-text").first().textContent()) ?? "", /found-and-run/);
  });

  test("a refused selection shows the hub's reason and leaves the picker open to fix it", async () => {
    await page.goto(`${hub.origin}/playground?servers=nope`);
    const error = page.locator('[data-error="connect"]');
    await error.waitFor({ timeout: 30_000 });
    assert.match((await error.textContent()) ?? "", /Unknown server 'nope'/);
    assert.equal(await page.locator(".catalog-picker").getAttribute("open"), "");
    await page.locator('[data-action="reset-selection"]').click();
    await page.waitForURL(/\/playground$/);
    await page.locator('.pill[data-state="connected"]').waitFor({ timeout: 30_000 });
    assert.deepEqual(
      errors.filter((e) => !/400|Bad Request/.test(e)),
      [],
      "no page errors besides the refused connection",
    );
  });
});
