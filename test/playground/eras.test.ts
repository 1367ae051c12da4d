// The playground speaks MCP 2026-07-28 by default and 2025-11-25 when asked, in real Chromium on a
// hub with two tenants: the header shows the revision the connection negotiated, a tool call with
// its log line and progress works in both, and the clients panel lists the page's tenant's clients
// of both eras and never another tenant's.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { fixture, startHub, type TestHub } from "../helpers/hub.js";
import { launch } from "./browser.js";

const KEY_A = `alice-${randomBytes(12).toString("hex")}`;
const KEY_B = `bob-${randomBytes(12).toString("hex")}`;

describe("the playground's protocol eras", () => {
  let hub: TestHub;
  let browser: Browser;
  const errors: string[] = [];

  /** A page of `key`'s tenant (the key already in the tab, as after the key dialog), connected. */
  async function openAs(key: string, query = ""): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1360, height: 860 } });
    await context.addInitScript((k) => sessionStorage.setItem("agentbox.apiKey", k), key);
    const page = await context.newPage();
    page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
    await page.goto(`${hub.origin}/playground${query}`);
    await page.locator('.pill[data-state="connected"]').waitFor({ timeout: 30_000 });
    return page;
  }

  const labels = (page: Page) => page.locator(".log-entry .log-label").allTextContents();

  /** Run echo_log and echo_slow: the result, the log line (2026: only when the call's envelope asks) and the progress all arrive. */
  async function callTools(page: Page, word: string): Promise<void> {
    await page.click('.sidebar button[data-tool="echo_log"]');
    const log = page.locator("#tool-echo_log");
    await log.locator('[name="message"]').fill(word);
    await log.locator('[data-action="run"]').click();
    await log.locator('.result[data-state="ok"]').waitFor({ timeout: 30_000 });
    assert.match((await log.locator(".result .kind-text").textContent()) ?? "", /logged/);
    await page.locator(".log-entry .log-label", { hasText: `notifications/message info: "${word}"` }).waitFor({ timeout: 10_000 });

    await page.click('.sidebar button[data-tool="echo_slow"]');
    const slow = page.locator("#tool-echo_slow");
    await slow.locator('[name="steps"]').fill("3");
    await slow.locator('[name="delayMs"]').fill("150");
    await slow.locator('[data-action="run"]').click();
    await slow.locator('.result[data-state="ok"]').waitFor({ timeout: 30_000 });
    assert.match((await slow.locator(".result .kind-text").textContent()) ?? "", /done after 3 steps/);
    assert.ok(
      (await labels(page)).some((l) => /^notifications\/progress \d\/3 step \d$/.test(l)),
      "progress crossed in this era",
    );
  }

  async function clientEntries(page: Page) {
    await page.click('[data-action="refresh-clients"]');
    await page.locator('.clients-panel[data-state="ok"]').waitFor();
    return page
      .locator(".client-entry")
      .evaluateAll((els) =>
        els.map((el) => ({ ...(el as HTMLElement).dataset, current: el.classList.contains("current") }) as Record<string, string | boolean>),
      );
  }

  before(async () => {
    [hub, browser] = await Promise.all([
      startHub({ servers: [], extraServers: { echo: fixture("echo-server") }, config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } } }),
      launch(),
    ]);
  });
  after(() => Promise.all([browser?.close(), hub?.stop()]));

  let alice2026: Page;
  let alice2025: Page;

  test("connects with 2026-07-28 by default, shows it, and runs tools with their log lines and progress", async () => {
    alice2026 = await openAs(KEY_A);
    const badge = alice2026.locator(".protocol");
    assert.equal(await badge.getAttribute("data-version"), "2026-07-28");
    assert.equal(await badge.getAttribute("data-era"), "modern");
    assert.equal(await badge.textContent(), "MCP 2026-07-28", "no session to show");
    assert.equal(await alice2026.locator('select[name="protocol"]').inputValue(), "auto");
    const seen = await labels(alice2026);
    assert.ok(
      seen.some((l) => l.startsWith("server/discover")),
      seen.join("\n"),
    );
    assert.ok(!seen.some((l) => l.startsWith("initialize")), "no 2025 handshake");
    await callTools(alice2026, "hello-2026");
  });

  test("switches to 2025-11-25 with the control, shows it, and runs the same tools", async () => {
    alice2025 = await openAs(KEY_A);
    await Promise.all([alice2025.waitForURL(/protocol=legacy/), alice2025.locator('select[name="protocol"]').selectOption("legacy")]);
    await alice2025.locator('.pill[data-state="connected"]').waitFor({ timeout: 30_000 });
    const badge = alice2025.locator(".protocol");
    assert.equal(await badge.getAttribute("data-version"), "2025-11-25");
    assert.equal(await badge.getAttribute("data-era"), "legacy");
    assert.match((await badge.textContent()) ?? "", /^MCP 2025-11-25 · session [0-9a-f]{8}$/);
    assert.equal(await alice2025.locator('select[name="protocol"]').inputValue(), "legacy");
    assert.ok((await labels(alice2025)).includes("initialize #0"));
    await callTools(alice2025, "hello-2025");
  });

  test("the clients panel shows its tenant's clients of both eras, and none of another tenant's", async () => {
    const bob2026 = await openAs(KEY_B);
    const bob2025 = await openAs(KEY_B, "?protocol=legacy");
    const alice = await clientEntries(alice2026);
    assert.deepEqual(alice.map((e) => [e.transport, e.era, e.version, e.current]).sort(), [
      ["modern", "modern", "2026-07-28", true],
      ["streamable", "legacy", "2025-11-25", false],
    ]);
    const fromLegacy = await clientEntries(alice2025);
    assert.deepEqual(fromLegacy.map((e) => e.label).sort(), alice.map((e) => e.label).sort(), "both of alice's pages see the same two clients");
    assert.deepEqual(
      fromLegacy.filter((e) => e.current).map((e) => e.transport),
      ["streamable"],
    );
    // a hostile client of alice's names itself in markup: her panel shows the words, nothing runs
    await fetch(`${hub.origin}/mcp`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${KEY_A}` },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: '<img src=x onerror="window.__pwned=1">', version: "1" } },
      }),
    }).then((res) => res.text());
    await clientEntries(alice2026);
    const hostile = alice2026.locator(".client-who", { hasText: '<img src=x onerror="window.__pwned=1"> 1' });
    assert.equal(await hostile.count(), 1);
    assert.equal(await alice2026.locator(".clients-panel img").count(), 0);
    assert.equal(await alice2026.evaluate(() => (window as { __pwned?: number }).__pwned), undefined);
    const bob = [...(await clientEntries(bob2026)), ...(await clientEntries(bob2025))];
    assert.equal(new Set(bob.map((e) => e.label)).size, 2, "bob sees his own two");
    for (const entry of bob) assert.ok(!alice.some((a) => a.label === entry.label), `bob's panel shows none of alice's (${entry.label})`);
    assert.deepEqual(errors, []);
  });
});
