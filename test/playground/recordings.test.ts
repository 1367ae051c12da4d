// The playground's recordings panel, in real Chromium: the page's session opens a recorded
// terminal (its tool panels), runs `ls` and `echo`, and the panel replays the recording in the page
// with asciinema-player, showing the text.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { startHub, type TestHub } from "../helpers/hub.js";
import { launch, openPage } from "./browser.js";

async function run(page: Page, tool: string, fill: (panel: ReturnType<Page["locator"]>) => Promise<void>): Promise<string> {
  await page.click(`.sidebar button[data-tool="${tool}"]`);
  const panel = page.locator(`#tool-${tool}`);
  await fill(panel);
  await panel.locator('[data-action="run"]').click();
  const result = panel.locator('.result[data-state="ok"]');
  await result.waitFor({ timeout: 30_000 });
  return result.innerText();
}

describe("the playground's recordings panel", () => {
  let hub: TestHub;
  let browser: Browser;
  let page: Page;
  let errors: string[];

  before(async () => {
    [hub, browser] = await Promise.all([startHub({ servers: ["terminal"] }), launch()]);
    ({ page, errors } = await openPage(browser));
    await page.goto(`${hub.origin}/playground`);
    await page.locator('.pill[data-state="connected"]').waitFor({ timeout: 30_000 });
  });
  after(() => Promise.all([browser?.close(), hub?.stop()]));

  test("replays a recorded terminal in the page, showing its output", async () => {
    const created = await run(page, "terminal_session_create", (panel) => panel.locator('[name="record"]').check());
    const id = /Terminal (t[0-9a-f]+) started/.exec(created)?.[1];
    assert.ok(id, created);
    await run(page, "terminal_session_send", async (panel) => {
      await panel.locator('[name="id"]').fill(id);
      await panel.locator('[name="input"]').fill("mkdir -p shown && touch shown/listed-in-replay && ls shown && echo replayed-$((40+2))\n");
      await panel.locator('[name="waitFor"]').fill("replayed-42");
    });
    const entry = page.locator('.recording-entry[data-kind="terminal"]').first();
    await entry.waitFor({ timeout: 30_000 });
    await entry.locator("button.replay").click();
    const replay = page.locator(".recording-replay");
    await replay.waitFor();
    // the player draws the terminal's text as it plays
    await replay.getByText("replayed-42").first().waitFor({ timeout: 30_000 });
    assert.match(await replay.innerText(), /listed-in-replay/);
    assert.deepEqual(
      errors.filter((e) => !/favicon/.test(e)),
      [],
    );
    await replay.locator('[data-action="close-replay"]').click();
    assert.equal(await page.locator(".recording-replay").count(), 0);
  });
});
