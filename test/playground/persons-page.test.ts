// The playground as a person meets it (issue 38), in real Chromium at 1280×800 and 800×600: a
// result comes into view, the log is about the person's calls, the page shows the session's
// servers and agrees with itself on its tools, a task's status follows the hub's to the end,
// "Run as a task" is offered where the tool allows it, a failed server says why, and nothing is
// cut off at the side. Screenshots go where screenshotPath says; each test prints their paths.
import { after, before, describe, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { fixture, startHub, type TestHub } from "../helpers/hub.js";
import { until } from "../helpers/wait.js";
import { launch, screenshotPath } from "./browser.js";

const BROKEN_REASON = "needs an API token: set DEMO_TOKEN";

/** Every server but the broken one is ready (the hub cannot say it is ready with one that never starts). */
async function othersReady(hub: TestHub): Promise<void> {
  await until("the working servers to be ready", async () => {
    const { servers } = (await (await fetch(`${hub.origin}/`)).json()) as { servers: Array<{ name: string; state: string }> };
    return servers.filter((s) => s.name !== "broken").every((s) => s.state === "ready");
  });
}

describe("the playground as a person's page", () => {
  let hub: TestHub, browser: Browser;
  const contexts: BrowserContext[] = [];
  const errors: string[] = [];

  async function open(t: TestContext, url: string, size: { width: number; height: number } = { width: 1280, height: 800 }): Promise<Page> {
    const context = await browser.newContext({ viewport: size });
    contexts.push(context);
    const page = await context.newPage();
    page.on("pageerror", (err) => errors.push(`${t.name}: ${err.message}`));
    await page.goto(`${hub.origin}/playground${url}`);
    await page.locator('.pill[data-state="connected"]').waitFor({ timeout: 30_000 });
    return page;
  }

  async function shot(t: TestContext, page: Page, name: string): Promise<void> {
    const file = screenshotPath(name);
    await page.screenshot({ path: file });
    t.diagnostic(`screenshot: ${file}`);
  }

  async function tool(page: Page, name: string) {
    await page.click(`.sidebar button[data-tool="${name}"]`);
    const panel = page.locator(`#tool-${name}`);
    await panel.waitFor();
    return panel;
  }

  /** Whether the element's top part is inside the visible part of the page's main column. */
  const inView = (page: Page, selector: string) =>
    page.evaluate((sel) => {
      const el = document.querySelector(sel);
      const main = document.querySelector("main.main");
      if (!el || !main) return false;
      const box = el.getBoundingClientRect();
      const view = main.getBoundingClientRect();
      return box.top >= view.top && box.top + Math.min(box.height, 60) <= Math.min(view.bottom, window.innerHeight);
    }, selector);

  before(async () => {
    [hub, browser] = await Promise.all([
      startHub({
        servers: ["file", "terminal"],
        extraServers: {
          demo: fixture("playground-server"),
          conformance: fixture("conformance-server"),
          // a server that cannot start, saying why on its stderr as a real one would
          broken: { command: process.execPath, args: ["-e", `process.stderr.write(${JSON.stringify(BROKEN_REASON + "\n")}); process.exit(3)`] },
        },
        waitReady: false,
      }),
      launch(),
    ]);
    await othersReady(hub);
  });
  after(async () => {
    await Promise.all(contexts.map((c) => c.close().catch(() => undefined)));
    await Promise.all([browser?.close(), hub?.stop()]);
  });

  for (const size of [
    { width: 1280, height: 800 },
    { width: 800, height: 600 },
  ]) {
    test(`at ${size.width}×${size.height} a result below the form comes into view, and the status by Run jumps back to it`, async (t) => {
      const page = await open(t, "", size);
      // terminal_exec's form is long: its result starts below the fold
      const panel = await tool(page, "terminal_exec");
      await panel.locator('[name="command"]').fill("echo seen-by-the-person");
      await panel.locator('[data-action="run"]').click();
      await panel.locator('.result[data-state="ok"]').waitFor({ timeout: 60_000 });
      await until("the result to come into view", () => inView(page, "#tool-terminal_exec .result"));
      assert.match((await panel.locator(".call-status").textContent()) ?? "", /Done · .*Result ↓/);
      await shot(t, page, `result-${size.width}`);
      // scrolled away, the status by Run brings it back
      await page.locator("main.main").evaluate((el) => el.scrollTo(0, 0));
      await panel.locator('[data-action="to-result"]').click();
      await until("the jump to bring the result into view", () => inView(page, "#tool-terminal_exec .result"));
    });
  }

  test("the log shows the person's calls; the page's own bookkeeping and task polls only when asked, and polls slow down", async (t) => {
    const page = await open(t, "");
    const panel = await tool(page, "conformance_slow_compute");
    await panel.locator('[name="seconds"]').fill("60");
    await panel.locator('[data-action="as-task"]').check();
    const polls: number[] = [];
    page.on("request", (request) => {
      if (request.method() === "POST" && (request.postData() ?? "").includes('"method":"tasks/get"')) polls.push(Date.now());
    });
    await panel.locator('[data-action="run"]').click();
    // the first polls come quickly, then further apart while the task works on unchanged
    await until("six tasks/get", () => polls.length >= 6, 60_000);
    const gaps = polls.slice(1).map((at, i) => at - polls[i]!);
    // 500 ms, then half as long again each time: the fifth wait is over 1.6 s, never twice a second for a minute
    assert.ok(gaps[4]! >= 1500, `the polls back off: ${gaps.join(", ")} ms apart`);
    await panel.locator('[data-action="cancel"]').click();
    await panel.locator('.result[data-state="cancelled"]').waitFor({ timeout: 30_000 });

    const visible = await page.locator(".log-list li:visible .log-label").allTextContents();
    assert.ok(
      visible.some((l) => l.startsWith("tools/call conformance_slow_compute")),
      visible.join("\n"),
    );
    for (const own of ["hub_sessions", "hub_calls", "tasks/get"])
      assert.ok(!visible.some((l) => l.includes(own)), `${own} is hidden by default:\n${visible.join("\n")}`);
    await shot(t, page, "log-default");
    await page.locator('[data-action="show-bookkeeping"]').check();
    const all = await page.locator(".log-list li:visible .log-label").allTextContents();
    for (const own of ["tools/call hub_sessions", "tools/call hub_calls", "tasks/get"])
      assert.ok(
        all.some((l) => l.startsWith(own)),
        `${own} shown when asked`,
      );
  });

  test("after picking servers the header, the servers table and the sidebar show the session's servers", async (t) => {
    const page = await open(t, "?servers=file");
    assert.equal(await page.locator(".hub-info .hub-servers").textContent(), "1 of 5 servers");
    const rows = await page.locator(".overview tbody tr:not(.server-why)").evaluateAll((els) => els.map((e) => e.getAttribute("data-server")));
    assert.deepEqual(rows, ["file"]);
    const cards = await page.locator(".sidebar .server").evaluateAll((els) => els.map((e) => e.getAttribute("data-server")).sort());
    assert.deepEqual(cards, ["file", "hub"]);
    await shot(t, page, "selection-servers");
    // by tools: the servers that have one of them
    const byTool = await open(t, "?tools=terminal_exec,demo_*");
    assert.equal(await byTool.locator(".hub-info .hub-servers").textContent(), "2 of 5 servers");
    const tableOf = await byTool.locator(".overview tbody tr:not(.server-why)").evaluateAll((els) => els.map((e) => e.getAttribute("data-server")));
    assert.deepEqual(tableOf, ["terminal", "demo"]);
    assert.match((await byTool.locator('.overview tr[data-server="terminal"] td:last-child').textContent()) ?? "", /^1 of \d+$/);
  });

  test("in 2026 search mode the catalog card counts the tools the list shows, those hub_find_tools found included", async (t) => {
    const page = await open(t, "?catalog=search");
    const panel = await tool(page, "hub_find_tools");
    await panel.locator('[name="query"]').fill("run a shell command");
    await panel.locator('[data-action="run"]').click();
    await page.locator('.sidebar button[data-tool="terminal_exec"]').waitFor({ timeout: 30_000 });
    const listed = await page.locator(".sidebar button[data-tool]").count();
    assert.equal(Number(await page.locator(".catalog-size").getAttribute("data-tools")), listed);
    assert.match((await page.locator(".catalog-size").textContent()) ?? "", new RegExp(`^${listed} tools \\(\\d+ found\\)`));
    assert.equal(await page.locator(".hub-info .hub-tools").textContent(), `${listed} tools`);
    await shot(t, page, "search-found");
  });

  test("a cancelled task reads cancelled, in its panel and in the tasks panel, without a refresh", async (t) => {
    const page = await open(t, "");
    const panel = await tool(page, "conformance_slow_compute");
    await panel.locator('[name="seconds"]').fill("60");
    await panel.locator('[data-action="as-task"]').check();
    await panel.locator('[data-action="run"]').click();
    await panel.locator('.task-area[data-status="working"]').waitFor({ timeout: 30_000 });
    const taskId = (await panel.locator(".task-line code").textContent()) ?? "";
    await page.locator(`.task-entry[data-task="${taskId}"][data-status="working"]`).waitFor({ timeout: 30_000 });
    await panel.locator('[data-action="cancel"]').click();
    await panel.locator('.task-area[data-status="cancelled"]').waitFor({ timeout: 30_000 });
    assert.equal(await panel.locator(".task-status").textContent(), "cancelled");
    await page.locator(`.task-entry[data-task="${taskId}"][data-status="cancelled"]`).waitFor({ timeout: 30_000 });
    await shot(t, page, "task-cancelled");
    // a task that fails reads failed
    const failing = await tool(page, "conformance_failing_job");
    await failing.locator('[data-action="run"]').click();
    await failing.locator('.task-area[data-status="failed"], .task-area[data-status="completed"]').waitFor({ timeout: 30_000 });
    const { status } = (await failing.locator(".task-area").evaluate((el) => ({ ...(el as HTMLElement).dataset }))) as { status: string };
    const tasks = await page.locator(`.task-entry[data-tool="conformance_failing_job"]`).first();
    await tasks.and(page.locator(`[data-status="${status}"]`)).waitFor({ timeout: 30_000 });
  });

  test('"Run as a task" is offered where execution.taskSupport allows it, and its absence says why', async (t) => {
    const page = await open(t, "");
    const optional = await tool(page, "conformance_slow_compute");
    assert.equal(await optional.locator('[data-action="as-task"]').isEnabled(), true);
    const required = await tool(page, "conformance_failing_job");
    assert.equal(await required.locator('[data-action="as-task"]').isChecked(), true, "a tool that runs only as a task is ticked");
    assert.equal(await required.locator('[data-action="as-task"]').isDisabled(), true);
    for (const [name, why] of [
      ["conformance_greet", /may not run as a task \(its execution.taskSupport is "forbidden"\)/],
      ["demo_order", /does not declare it can run as a task/],
      ["hub_status", /does not declare it can run as a task/],
    ] as const) {
      const panel = await tool(page, name);
      assert.equal(await panel.locator('[data-action="as-task"]').count(), 0, `${name} offers no Run as a task`);
      assert.match((await panel.locator(".as-task-absent").getAttribute("title")) ?? "", why);
      assert.ok(await panel.locator(".as-task-absent").isVisible(), "a visible note says so");
    }
    await shot(t, page, "no-task");
  });

  test("a failed server shows why, in the servers table and in the sidebar", async (t) => {
    const page = await open(t, "");
    const why = page.locator('.overview tr.server-why[data-server="broken"]');
    await why.waitFor({ timeout: 30_000 });
    assert.match((await why.textContent()) ?? "", new RegExp(BROKEN_REASON));
    assert.match((await page.locator('.server[data-server="broken"] .server-error').textContent()) ?? "", new RegExp(BROKEN_REASON));
    await shot(t, page, "failed-server");
  });

  for (const size of [
    { width: 1280, height: 800 },
    { width: 800, height: 600 },
  ]) {
    test(`at ${size.width}×${size.height} the running status, the recent calls, the tasks and the servers table are not cut off`, async (t) => {
      const page = await open(t, "", size);
      // the servers table, on the welcome page
      assert.equal(await page.locator(".overview-wrap").evaluate((el) => el.scrollWidth <= el.clientWidth), true, "the servers table fits");
      // calls with long names and outcomes fill the recent calls
      for (const name of ["conformance_test_error_handling", "demo_fail"]) {
        const panel = await tool(page, name);
        await panel.locator('[data-action="run"]').click();
        await panel.locator(".result:not([data-state='running'])").waitFor({ timeout: 30_000 });
      }
      const slow = await tool(page, "demo_slow");
      await slow.locator('[name="steps"]').fill("400");
      await slow.locator('[name="delayMs"]').fill("100");
      await slow.locator('[data-action="run"]').click();
      await slow.locator(".call-status .progress-text", { hasText: /step \d+ of 400/ }).waitFor({ timeout: 30_000 });
      await page.locator('.call-entry[data-tool="demo_fail"]').first().waitFor({ timeout: 30_000 });
      await shot(t, page, `running-${size.width}`);
      const form = (await slow.locator(".tool-form").boundingBox())!;
      for (const part of [".call-status .progress-text", ".call-status .elapsed", '[data-action="cancel"]']) {
        const box = (await slow.locator(part).boundingBox())!;
        assert.ok(box.x + box.width <= form.x + form.width + 0.5, `${part} ends inside the form (${box.x + box.width} ≤ ${form.x + form.width})`);
      }
      assert.equal(await slow.locator(".progress-text").evaluate((el) => el.scrollWidth <= el.clientWidth), true, "the progress text is whole");
      const sidebar = (await page.locator(".sidebar-wrap").boundingBox())!;
      for (const entry of await page.locator(".call-entry").all()) {
        for (const part of [".call-outcome", ".call-duration"]) {
          const box = (await entry.locator(part).boundingBox())!;
          assert.ok(box.x + box.width <= sidebar.x + sidebar.width, `a recent call's ${part} is inside the column`);
        }
      }
      assert.equal(await page.locator(".calls-list").evaluate((el) => el.scrollWidth <= el.clientWidth), true, "nothing of the recent calls scrolls sideways");
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), size.width, "the page does not scroll sideways");
      // nor down: the top bar stays, each column scrolls on its own
      assert.equal(await page.evaluate(() => document.documentElement.scrollHeight), size.height, "the page itself does not scroll");
      assert.equal((await page.locator(".topbar").boundingBox())!.y, 0);
      await slow.locator('[data-action="cancel"]').click();
      await slow.locator('.result[data-state="cancelled"]').waitFor({ timeout: 30_000 });
    });
  }

  test("no page errors", () => {
    assert.deepEqual(errors, []);
  });
});
