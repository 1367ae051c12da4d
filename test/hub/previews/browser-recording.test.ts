// A browser recorded as a Playwright trace: under AGENTBOX_RECORD=browser every session's browser is
// traced from its first page; browser_record saves it, hub_recordings lists it, its URL downloads
// the .zip, and the trace viewer the hub serves opens it in real Chromium, showing the page.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { launch, openPage } from "../../playground/browser.js";
import { recordingsOf } from "./recording-helpers.js";
import { until } from "../../helpers/wait.js";

const TITLE = "Recorded page title 7f3a";
const PAGE = `data:text/html,<title>${TITLE}</title><h1>recorded heading</h1>`;

describe("recordings of the browser", () => {
  let hub: TestHub;
  let client: Client;
  let browser: Browser;

  before(async () => {
    hub = await startHub({ servers: ["browser"], env: { AGENTBOX_RECORD: "browser" } });
    client = await hub.connect();
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await hub?.stop();
  });

  test("the operator's setting traces the session's browser; saved, it downloads and opens in the hub's trace viewer", async () => {
    const navigated = await call(client, "browser_navigate", { url: PAGE });
    assert.ok(!navigated.isError, textOf(navigated));
    const [running] = await recordingsOf(client);
    assert.equal(running?.kind, "browser");
    assert.equal(running.endedAt, null);
    const early = await fetch(running.url);
    assert.equal(early.status, 404, "nothing to download before the trace is written");
    await early.text();

    const saved = await call(client, "browser_record", { record: false });
    assert.ok(!saved.isError, textOf(saved));
    assert.match(textOf(saved), /Saved recording browser-/);
    const [listed] = await recordingsOf(client);
    assert.equal(listed?.id, running.id);
    assert.equal(listed.format, "playwright-trace");
    assert.ok(listed.endedAt && listed.bytes > 0, JSON.stringify(listed));
    assert.equal(listed.url, running.url);
    const zip = Buffer.from(await (await fetch(listed.url)).arrayBuffer());
    assert.equal(zip.subarray(0, 2).toString(), "PK", "a zip");
    assert.equal(zip.length, listed.bytes);

    const { page, errors } = await openPage(browser);
    await page.goto(`${hub.origin}/trace-viewer/index.html?trace=${encodeURIComponent(listed.url)}`);
    // the viewer shows the recorded page's URL (its address bar above the snapshot) and draws the page in its frame
    await page.getByText(PAGE, { exact: true }).first().waitFor({ timeout: 30_000 });
    const heading = await until("the snapshot to show the page", async () => {
      for (const frame of page.frames()) {
        const text = await frame
          .locator("h1")
          .first()
          .textContent({ timeout: 500 })
          .catch(() => null);
        if (text?.includes("recorded heading")) return text;
      }
      return undefined;
    });
    assert.equal(heading, "recorded heading", errors.join("; "));
  });

  test("browser_record starts a new recording; the next one gets its own id", async () => {
    const started = await call(client, "browser_record", { record: true });
    assert.ok(!started.isError, textOf(started));
    const id = (started.structuredContent as { recording: string }).recording;
    const all = await recordingsOf(client);
    assert.equal(all.length, 2);
    assert.equal(all.at(-1)?.id, id);
    assert.equal(all.at(-1)?.endedAt, null);
  });
});
