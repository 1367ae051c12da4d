// The playground's Recent calls panel, in real Chromium: the calls this page ran, with their outcome
// and duration, from the hub's call records (hub_calls); never another session's or another tenant's.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { call, fixture, startHub, type TestHub } from "../helpers/hub.js";
import { until } from "../helpers/wait.js";
import { launch } from "./browser.js";

const KEY_A = `alice-${randomBytes(12).toString("hex")}`;
const KEY_B = `bob-${randomBytes(12).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

interface Shown {
  tool: string;
  outcome: string;
  duration: string;
  text: string;
}

describe("the playground's recent calls", () => {
  let hub: TestHub;
  let browser: Browser;
  const errors: string[] = [];

  async function openPage(query: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1360, height: 860 } });
    await context.addInitScript((k) => sessionStorage.setItem("agentbox.apiKey", k), KEY_A);
    const page = await context.newPage();
    page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
    await page.goto(`${hub.origin}/playground${query}`);
    await page.locator('.pill[data-state="connected"]').waitFor({ timeout: 30_000 });
    return page;
  }

  async function run(page: Page, tool: string, fill: Record<string, string>): Promise<void> {
    await page.click(`.sidebar button[data-tool="${tool}"]`);
    const panel = page.locator(`#tool-${tool}`);
    for (const [name, value] of Object.entries(fill)) await panel.locator(`[name="${name}"]`).fill(value);
    await panel.locator('[data-action="run"]').click();
    await panel.locator('.result[data-state]:not([data-state="running"])').waitFor({ timeout: 30_000 });
  }

  /** The panel's entries once it shows `count` of them. */
  async function shown(page: Page, count: number): Promise<Shown[]> {
    await page.waitForFunction((n) => document.querySelectorAll(".call-entry").length >= n, count, { timeout: 30_000 });
    return page.locator(".call-entry").evaluateAll((els) =>
      els.map((el) => {
        const e = el as HTMLElement;
        return { tool: e.dataset.tool!, outcome: e.dataset.outcome!, duration: e.dataset.duration!, text: e.textContent ?? "" };
      }),
    );
  }

  before(async () => {
    [hub, browser] = await Promise.all([
      startHub({
        servers: [],
        extraServers: { echo: fixture("echo-server") },
        config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
      }),
      launch(),
    ]);
  });
  after(() => Promise.all([browser?.close(), hub?.stop()]));

  for (const [era, query] of [
    ["2025 session", "?protocol=legacy"],
    ["2026 context", ""],
  ] as const) {
    test(`a ${era}: the page's calls, newest first, with outcome and duration, and no other tenant's`, async () => {
      const page = await openPage(query);
      const bob = await hub.connect({ headers: auth(KEY_B) });
      await call(bob, "echo_echo", { text: "bob's" });
      await run(page, "echo_echo", { text: "hello" });
      await run(page, "echo_slow", { steps: "2", delayMs: "200" });
      const calls = await shown(page, 2);
      assert.deepEqual(
        calls.slice(0, 2).map((c) => [c.tool, c.outcome]),
        [
          ["echo_slow", "ok"],
          ["echo_echo", "ok"],
        ],
        JSON.stringify(calls),
      );
      // the slow call slept 2 × 200 ms in its server: its duration says so
      assert.ok(Number(calls[0].duration) >= 400, JSON.stringify(calls[0]));
      assert.match(calls[0].text, /\d+ ms|\d+(\.\d+)? s/);
      assert.equal(calls.filter((c) => c.tool === "echo_echo").length, 1, "bob's call is not alice's news");
      assert.deepEqual(errors, []);
      await page.context().close();
    });
  }

  test("a 2025 session shows its own calls, not those of another session of its tenant", async () => {
    const page = await openPage("?protocol=legacy");
    const other = await hub.connect({ headers: auth(KEY_A) });
    await call(other, "echo_stats");
    await run(page, "echo_echo", { text: "mine" });
    const calls = await shown(page, 1);
    assert.deepEqual(
      calls.map((c) => c.tool),
      ["echo_echo"],
    );
    await page.context().close();
  });

  test("the page's own bookkeeping (its panels reading hub_sessions and hub_calls) is no audit line; what it ran is", async () => {
    const page = await openPage("");
    await run(page, "echo_echo", { text: "audited" });
    await shown(page, 1);
    await page.context().close();
    // every line the pages' calls got stands before the line of a call made after them
    const alice = await hub.connect({ headers: auth(KEY_A) });
    await assert.rejects(alice.callTool({ name: "sentinel_tool", arguments: {} }), /Unknown tool/);
    const trail = () =>
      hub.logs.flatMap((line) => {
        try {
          const entry = JSON.parse(line) as { audit?: string; tenant?: string; tool?: string; outcome?: string };
          return entry.audit === "call" && entry.tenant === "alice" ? [`${entry.tool!}${entry.outcome === "ok" ? "" : ` ${entry.outcome}`}`] : [];
        } catch {
          return [];
        }
      });
    await until("the sentinel's audit line", () => trail().includes("sentinel_tool refused"));
    const tools = trail();
    assert.ok(tools.includes("echo_echo"), `the page's echo_echo call is audited: ${tools.join(", ")}`);
    // hub_recordings, which the Recordings panel calls when the page connects, mints download links,
    // so it is audited like any call that grants something (hub/sessions/call-records.ts)
    assert.deepEqual(
      tools.filter((t) => t.startsWith("hub_") && t !== "hub_recordings"),
      [],
      "the panels' hub_sessions and hub_calls calls are bookkeeping, not audit lines",
    );
  });
});
