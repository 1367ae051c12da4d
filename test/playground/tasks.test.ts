// The playground runs its 2026-07-28 calls of task-capable tools as tasks, in real Chromium: the call
// declares the tasks extension, polls tasks/get to its result, shows a task's question (input_required)
// as a form and answers it with tasks/update, and its Cancel sends tasks/cancel. Its tasks panel lists
// the tenant's tasks (hub_sessions) with their status, never another tenant's, and cancels one
// (hub_cancel_task). A question's words come from a tool's server: shown as text, never run.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { fixture, startHub, type TestHub } from "../helpers/hub.js";
import { until } from "../helpers/wait.js";
import { getTask, startTask as start } from "../hub/modern/modern-client.js";
import { launch } from "./browser.js";

const KEY_A = `alice-${randomBytes(12).toString("hex")}`;
const KEY_B = `bob-${randomBytes(12).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const startTask = (hub: TestHub, key: string, name: string, args: Record<string, unknown>) => start(hub, auth(key), name, args);
const statusOf = async (hub: TestHub, key: string, taskId: string) => (await getTask(hub, auth(key), taskId))?.status;

describe("the playground's tasks", () => {
  let hub: TestHub;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];

  async function open(tool: string) {
    await page.click(`.sidebar button[data-tool="${tool}"]`);
    return page.locator(`#tool-${tool}`);
  }

  /** The tasks panel's entries after a refresh. */
  async function panelTasks() {
    await page.click('[data-action="refresh-tasks"]');
    await page.locator('.tasks-panel[data-state="ok"]').waitFor();
    return page.locator(".task-entry").evaluateAll((els) => els.map((el) => ({ ...(el as HTMLElement).dataset }) as Record<string, string>));
  }

  before(async () => {
    [hub, browser] = await Promise.all([
      startHub({
        servers: [],
        extraServers: {
          // a third-party server that declares nothing: the config makes its slow tool task-capable
          echo: { ...fixture("echo-server"), taskSupport: { slow: "optional" } },
          conformance: { ...fixture("conformance-server"), prefix: "" },
        },
        config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
      }),
      launch(),
    ]);
    const context = await browser.newContext({ viewport: { width: 1360, height: 860 } });
    await context.addInitScript((k) => sessionStorage.setItem("agentbox.apiKey", k), KEY_A);
    page = await context.newPage();
    page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
    await page.goto(`${hub.origin}/playground`);
    await page.locator('.pill[data-state="connected"]').waitFor({ timeout: 30_000 });
  });
  after(() => Promise.all([browser?.close(), hub?.stop()]));

  test("ticked, a task-capable tool's call runs as a task, polled with tasks/get to its result, and shows in the tasks panel", async () => {
    const panel = await open("echo_slow");
    await panel.locator('[name="steps"]').fill("3");
    await panel.locator('[name="delayMs"]').fill("300");
    // unticked, the call runs the usual way: its progress streams in, no task
    await panel.locator('[data-action="run"]').click();
    await panel.locator('.result[data-state="ok"]').waitFor({ timeout: 30_000 });
    assert.equal(await panel.locator(".task-area").isHidden(), true);
    assert.ok(!(await page.locator(".log-entry .log-label").allTextContents()).some((l) => l.startsWith("tasks/get")));
    await panel.locator('[data-action="as-task"]').check();
    await panel.locator('[data-action="run"]').click();
    await panel.locator(".task-line code").waitFor({ timeout: 30_000 });
    const taskId = (await panel.locator(".task-line code").textContent()) ?? "";
    await panel.locator('.result[data-state="ok"]').waitFor({ timeout: 30_000 });
    assert.match((await panel.locator(".result .kind-text").textContent()) ?? "", /done after 3 steps/);
    assert.equal(await panel.locator(".task-area").getAttribute("data-status"), "completed");
    const labels = await page.locator(".log-entry .log-label").allTextContents();
    assert.ok(
      labels.some((l) => l.startsWith("tasks/get")),
      labels.join("\n"),
    );
    const entry = (await panelTasks()).find((t) => t.task === taskId);
    assert.deepEqual([entry?.tool, entry?.status], ["echo_slow", "completed"]);
  });

  test("a task's question is shown as text in a form and answered with tasks/update", async () => {
    const hostile = '<img src=x onerror="window.__pwned=1">';
    const panel = await open("confirm_delete");
    await panel.locator('[name="filename"]').fill(hostile);
    await panel.locator('[data-action="as-task"]').check();
    await panel.locator('[data-action="run"]').click();
    const question = panel.locator('.task-question[data-method="elicitation/create"]');
    await question.waitFor({ timeout: 30_000 });
    assert.equal(await panel.locator(".task-status").textContent(), "input_required");
    assert.equal(await question.locator(".task-question-message").textContent(), `Delete ${hostile}?`);
    assert.equal(await page.locator(".task-questions img").count(), 0);
    assert.equal((await panelTasks()).find((t) => t.tool === "confirm_delete")?.status, "input_required");
    await question.locator('[name="confirm"]').check();
    await question.locator('[data-action="accept"]').click();
    await panel.locator('.result[data-state="ok"]').waitFor({ timeout: 30_000 });
    assert.match((await panel.locator(".result .kind-text").textContent()) ?? "", /Deleted <img src=x onerror="window.__pwned=1">$/);
    assert.ok((await page.locator(".log-entry .log-label").allTextContents()).some((l) => l.startsWith("tasks/update")));
    assert.equal(await page.evaluate(() => (window as { __pwned?: number }).__pwned), undefined);
  });

  test("unticked, a call whose server asks ends saying the page cannot answer, never waiting on a question nobody sees", async () => {
    const panel = await open("confirm_delete");
    await panel.locator('[data-action="as-task"]').uncheck();
    await panel.locator('[name="filename"]').fill("plain.txt");
    await panel.locator('[data-action="run"]').click();
    await panel.locator('.result[data-state="error"], .result[data-state="failed"], .result[data-state="ok"]').waitFor({ timeout: 30_000 });
    const shown = `${await panel.locator(".result").getAttribute("data-state")}: ${await panel.locator(".result").textContent()}`;
    // the hub's own word on what to do, not the client library failing on a question it was said to handle
    assert.match(shown, /asked its caller elicitation\/create, which needs the elicitation client capability; this request did not declare it/, shown);
    assert.equal(await panel.locator(".task-question").count(), 0);
  });

  test("Cancel sends tasks/cancel: the task ends cancelled", async () => {
    const panel = await open("slow_compute");
    await panel.locator('[name="seconds"]').fill("60");
    await panel.locator('[data-action="as-task"]').check();
    await panel.locator('[data-action="run"]').click();
    await panel.locator(".task-line code").waitFor({ timeout: 30_000 });
    const taskId = (await panel.locator(".task-line code").textContent()) ?? "";
    await panel.locator('[data-action="cancel"]').click();
    await panel.locator('.result[data-state="cancelled"]').waitFor({ timeout: 30_000 });
    await until("the hub to report the task cancelled", async () => (await statusOf(hub, KEY_A, taskId)) === "cancelled");
    assert.ok((await page.locator(".log-entry .log-label").allTextContents()).some((l) => l.startsWith("tasks/cancel")));
  });

  test("the tasks panel lists the tenant's tasks from every client, never another tenant's, and cancels one", async () => {
    const others = await startTask(hub, KEY_A, "slow_compute", { seconds: 60 });
    const bobs = await startTask(hub, KEY_B, "slow_compute", { seconds: 60 });
    const shown = await panelTasks();
    assert.equal(shown.find((t) => t.task === others)?.status, "working");
    assert.ok(!shown.some((t) => t.task === bobs), "bob's task is not on alice's page");
    // task ids start with the hub process's own part, the same for every tenant: the uuid after it is the task's
    assert.ok(!(await page.locator(".tasks-panel").textContent())?.includes(bobs.split(".").at(-1)!.slice(0, 8)));
    await page.locator(`.task-entry[data-task="${others}"] [data-action="cancel-task"]`).click();
    await page.locator(`.task-entry[data-task="${others}"][data-status="cancelled"]`).waitFor({ timeout: 30_000 });
    assert.equal(await statusOf(hub, KEY_A, others), "cancelled");
    assert.equal(await statusOf(hub, KEY_B, bobs), "working", "bob's task runs on");
    assert.deepEqual(errors, []);
  });
});
