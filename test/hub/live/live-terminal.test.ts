// A live view of an agent's terminal, end to end: the agent types `ls` into its pty over MCP, a
// person's browser (real Chromium) shows the output through xterm.js, takes control and types a
// command of its own while the agent's input waits, then hands back.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Browser, Page } from "playwright-core";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { launch } from "../../playground/browser.js";

const screenText = (viewer: Page) => viewer.evaluate(() => document.querySelector(".xterm-rows")?.textContent ?? "");
const holderOf = (viewer: Page) => viewer.evaluate(() => window.liveView.holder);

describe("live view of a terminal", () => {
  let hub: TestHub;
  let agent: Client;
  let browser: Browser;
  let viewer: Page;
  let id: string;

  before(async () => {
    hub = await startHub({ servers: ["terminal"] });
    agent = await hub.connect();
    const created = await call(agent, "terminal_session_create", {});
    assert.ok(!created.isError, textOf(created));
    id = (created.structuredContent as { id: string }).id;
    const view = await call(agent, "hub_live_view", { terminal: id });
    assert.ok(!view.isError, textOf(view));
    assert.equal((view.structuredContent as { kind: string }).kind, "terminal");
    browser = await launch();
    viewer = await (await browser.newContext()).newPage();
    await viewer.goto((view.structuredContent as { url: string }).url);
  });

  after(async () => {
    await browser?.close();
    await hub?.stop();
  });

  test("the view shows what the agent's commands print", async () => {
    const sent = await call(agent, "terminal_session_send", { id, input: "touch live-marker-file && ls\n", waitFor: "live-marker-file" });
    assert.ok(!sent.isError, textOf(sent));
    await until("the view shows the ls output", async () => (await screenText(viewer)).includes("live-marker-file"));
  });

  test("a person takes over and types; the agent's input waits, and hears when control came back", async () => {
    await viewer.getByRole("button", { name: "Take over" }).click();
    await until("the person holds control", async () => (await holderOf(viewer)) === "you");
    await agent.listTools(); // so the official client checks results against the tools' output schemas
    const held = await call(agent, "terminal_session_send", { id, input: "echo agent-typed\n" });
    assert.equal(held.isError, true, "a tool with an output schema answers a held call with an error result");
    assert.match(textOf(held), /A person is using this terminal/);
    assert.equal(held._meta?.["agentbox/retryAfterMs"], 5000);
    assert.deepEqual(held.structuredContent && { sentBytes: held.structuredContent.sentBytes }, { sentBytes: 0 });
    await viewer.locator("#terminal").click();
    await viewer.keyboard.type("echo person-$((20+22))");
    await viewer.keyboard.press("Enter");
    await until("the person's command ran", async () => (await screenText(viewer)).includes("person-42"));
    await viewer.getByRole("button", { name: "Hand back" }).click();
    await until("the agent holds control", async () => (await holderOf(viewer)) === "agent");
    const back = await call(agent, "terminal_session_send", { id, input: "echo agent-again\n", waitFor: "agent-again\\s" });
    assert.ok(!back.isError, textOf(back));
    assert.match(textOf(back), /handed control back/);
    assert.doesNotMatch(textOf(back), /agent-typed/);
  });
});
