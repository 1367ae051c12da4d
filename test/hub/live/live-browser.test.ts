// Live views of an agent's browser tab, end to end: a real hub (two tenants, each its own uid) runs
// the browser server; the agent drives its tab over MCP; a person's browser (a second real
// Chromium) opens the view's URL, sees the tab change, takes control, clicks and types into the
// agent's page, and hands back. Then the attacks: another tenant, altered and revoked tokens,
// a foreign Origin, and fifty viewers at once.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import http from "node:http";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Browser, Page } from "playwright-core";
import WebSocket from "ws";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { listenForTenants } from "../../helpers/tenant-ports.js";
import { until } from "../../helpers/wait.js";
import { launch } from "../../playground/browser.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ headers: { Authorization: `Bearer ${key}` } });

// a page that changes every 100 ms, a block whose colour the test sets, a counter button and an
// input, each at a fixed place so the view's coordinates can be checked
const APP = `<!doctype html><html><head><meta charset="utf-8"><title>Live app</title>
<style>body{margin:0}#tick{position:fixed;left:20px;top:20px;font:20px sans-serif}
#block{position:fixed;left:600px;top:100px;width:400px;height:300px;background:rgb(20,160,40)}
#add{position:fixed;left:100px;top:200px;width:200px;height:100px}
#field{position:fixed;left:100px;top:400px;width:300px;height:40px}</style></head><body>
<p id="tick">tick 0</p><div id="block"></div>
<button id="add" onclick="this.dataset.n = String(Number(this.dataset.n || 0) + 1); document.getElementById('count').textContent = 'count ' + this.dataset.n">Add</button>
<p id="count" style="position:fixed;left:100px;top:320px">count 0</p>
<input id="field" aria-label="Field">
<script>let n = 0; setInterval(() => { document.getElementById("tick").textContent = "tick " + ++n; }, 100);</script>
</body></html>`;

interface ViewData {
  url: string;
  expiresAt: string;
  kind: string;
  tab?: number;
}

async function liveView(client: Client, args: Record<string, unknown> = {}): Promise<ViewData> {
  const result = await call(client, "hub_live_view", args);
  assert.ok(!result.isError, textOf(result));
  return result.structuredContent as unknown as ViewData;
}

interface ViewState {
  frames: number;
  kind: string;
  holder: string;
  url: string;
  title: string;
  tab?: number;
  closed: string;
  events: string[];
}

const stateOf = (viewer: Page) => viewer.evaluate(() => (window as unknown as { liveView: ViewState }).liveView);

/** The colour of the view's canvas at a point of the page (CSS pixels of the agent's 1280×720 viewport). */
async function colourAt(viewer: Page, x: number, y: number): Promise<[number, number, number]> {
  return viewer.evaluate(
    ([px, py]) => {
      const canvas = document.getElementById("screen") as HTMLCanvasElement;
      const d = canvas.getContext("2d")!.getImageData(Math.round((px / 1280) * canvas.width), Math.round((py / 720) * canvas.height), 1, 1).data;
      return [d[0], d[1], d[2]] as [number, number, number];
    },
    [x, y],
  );
}

const near = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - b[i]) < 40);

/** Where a point of the agent's page is on the person's screen. */
async function screenPoint(viewer: Page, x: number, y: number): Promise<{ x: number; y: number }> {
  const box = (await viewer.locator("#screen").boundingBox())!;
  return { x: box.x + (x / 1280) * box.width, y: box.y + (y / 720) * box.height };
}

function socketTo(url: string, origin: string): Promise<{ socket: WebSocket; status?: number }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url.replace(/^http/, "ws") + "/socket", { origin });
    socket.once("open", () => resolve({ socket }));
    socket.once("unexpected-response", (_req, res) => resolve({ socket, status: res.statusCode }));
    socket.once("error", reject);
  });
}

describe("live view of a browser tab", () => {
  let hub: TestHub;
  let site: http.Server;
  let appUrl: string;
  let alice: Client;
  let browser: Browser;
  let view: ViewData;
  let viewer: Page;

  before(async () => {
    site = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(APP));
    appUrl = `http://127.0.0.1:${await listenForTenants(site)}/`;
    hub = await startHub({ servers: ["browser"], config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } } });
    alice = await hub.connect(auth(KEY_A));
    const navigated = await call(alice, "browser_navigate", { url: appUrl });
    assert.ok(!navigated.isError, textOf(navigated));
    browser = await launch();
    view = await liveView(alice);
    viewer = await (await browser.newContext({ viewport: { width: 1000, height: 700 } })).newPage();
    await viewer.goto(view.url);
  });

  after(async () => {
    await browser?.close();
    await hub?.stop();
    site?.close();
  });

  test("the view shows the tab as it changes, frame after frame", async () => {
    assert.equal(view.kind, "browser");
    assert.match(view.url, new RegExp(`^${hub.origin}/live/[a-z2-7]{26}$`));
    const first = await until("frames arrive", async () => ((await stateOf(viewer)).frames >= 1 ? await stateOf(viewer) : undefined));
    assert.equal(first.url, appUrl);
    assert.equal(first.title, "Live app");
    // the page ticks every 100 ms: frames keep coming
    await until("more frames", async () => (await stateOf(viewer)).frames >= first.frames + 3);
    await until("the green block shows", async () => near(await colourAt(viewer, 800, 250), [20, 160, 40]));
    const painted = await call(alice, "browser_evaluate", { code: "document.getElementById('block').style.background = 'rgb(200, 30, 200)'" });
    assert.ok(!painted.isError, textOf(painted));
    await until("the block turns purple in the view", async () => near(await colourAt(viewer, 800, 250), [200, 30, 200]));
  });

  test("a person takes over: clicks and keys reach the page, the agent is told and waits", async () => {
    await viewer.getByRole("button", { name: "Take over" }).click();
    await until("the person holds control", async () => (await stateOf(viewer)).holder === "you");
    // the official client checks a normal result against the tool's output schema (once it listed
    // the tools) and rejects one without structuredContent: the held reply must still reach the agent
    const listed = await alice.listTools();
    assert.ok(listed.tools.find((t) => t.name === "browser_snapshot")?.outputSchema, "browser_snapshot declares an output schema");
    const heldSnapshot = await call(alice, "browser_snapshot");
    assert.equal(heldSnapshot.isError, true, "a tool with an output schema answers an error result, which clients do not validate");
    assert.match(textOf(heldSnapshot), /A person is using this tab through a live view and holds control: nothing was done\. Wait, or call again later\./);
    assert.equal(heldSnapshot._meta?.["agentbox/retryAfterMs"], 5000);
    const held = await call(alice, "browser_click", { selector: "#add" });
    assert.ok(!held.isError, "a tool without an output schema answers a normal result");
    assert.match(textOf(held), /A person is using this tab/);
    assert.equal(held._meta?.["agentbox/retryAfterMs"], 5000);

    const button = await screenPoint(viewer, 200, 250);
    await viewer.mouse.click(button.x, button.y);
    await viewer.mouse.click(button.x, button.y);
    const field = await screenPoint(viewer, 250, 420);
    await viewer.mouse.click(field.x, field.y);
    await viewer.keyboard.type("hello");
    await viewer.keyboard.press("Backspace");

    await viewer.getByRole("button", { name: "Hand back" }).click();
    await until("the agent holds control again", async () => (await stateOf(viewer)).holder === "agent");
    let seen = "";
    const snapshot = await until("the page shows the person's input", async () => {
      const result = await call(alice, "browser_snapshot");
      seen = textOf(result);
      return /count 2/.test(textOf(result)) && /hell\b/.test(textOf(result)) ? result : undefined;
    }).catch((err) => assert.fail(`${err.message}: ${seen}`));
    assert.ok(!snapshot.isError);
    const clicks = textOf(await call(alice, "browser_get_text", { selector: "#count" }));
    assert.match(clicks, /count 2/);
  });

  test("after hand-back the next result says control came back, once", async () => {
    await viewer.getByRole("button", { name: "Take over" }).click();
    await until("held", async () => (await stateOf(viewer)).holder === "you");
    await viewer.getByRole("button", { name: "Hand back" }).click();
    await until("handed back", async () => (await stateOf(viewer)).holder === "agent");
    const first = await call(alice, "browser_click", { selector: "#add" });
    assert.ok(!first.isError, textOf(first));
    assert.match(textOf(first), /handed control back/);
    const second = await call(alice, "browser_click", { selector: "#add" });
    assert.doesNotMatch(textOf(second), /handed control back/);
  });

  test("the view says where the agent goes: navigations and tab switches", async () => {
    await call(alice, "browser_navigate", { url: `${appUrl}?second` });
    await until("the view heard of the navigation", async () => (await stateOf(viewer)).url === `${appUrl}?second`);
    await call(alice, "browser_tabs", { action: "new", url: `${appUrl}?third` });
    const switched = await until("the view follows the new tab", async () => {
      const state = await stateOf(viewer);
      return state.tab === 1 && state.url === `${appUrl}?third` ? state : undefined;
    });
    assert.ok(switched.events.some((e) => /switched to tab 1/.test(e)));
    await call(alice, "browser_tabs", { action: "select", index: 0 });
    await until("back on tab 0", async () => (await stateOf(viewer)).tab === 0);
  });

  test("fifty people watch one tab: every one gets frames", async () => {
    const sockets = await Promise.all(Array.from({ length: 50 }, () => socketTo(view.url, hub.origin)));
    const frames = sockets.map(() => 0);
    sockets.forEach(({ socket }, i) => {
      assert.equal(socket.readyState, WebSocket.OPEN);
      socket.on("message", (data, binary) => {
        if (!binary) return;
        frames[i]++;
        socket.send(JSON.stringify({ type: "ack" }));
      });
      socket.send(JSON.stringify({ type: "hello", width: 640, height: 360 }));
    });
    await until("all fifty got frames", () => frames.every((n) => n >= 2), 60_000);
    for (const { socket } of sockets) socket.close();
  });

  test("another tenant's view shows only its own browser, never alice's tab", async () => {
    const bob = await hub.connect(auth(KEY_B));
    assert.ok(!(await call(bob, "browser_navigate", { url: `${appUrl}?bob` })).isError);
    const bobs = await liveView(bob);
    const page = await (await browser.newContext()).newPage();
    await page.goto(bobs.url);
    const state = await until("bob's view opened", async () => ((await stateOf(page)).kind ? await stateOf(page) : undefined));
    assert.equal(state.url, `${appUrl}?bob`);
    // and alice's view still shows alice's tab
    assert.notEqual((await stateOf(viewer)).url, `${appUrl}?bob`);
    await page.close();
    await bob.close();
  });

  test("altered tokens and foreign origins get nothing", async () => {
    const altered = view.url.replace(/.$/, (c) => (c === "a" ? "b" : "a"));
    const page = await fetch(altered);
    assert.equal(page.status, 404);
    assert.match(await page.text(), /Live view not found/);
    assert.equal((await socketTo(altered, hub.origin)).status, 404);
    const foreign = await socketTo(view.url, "http://evil.example");
    assert.equal(foreign.status, 403);
    const none = await socketTo(view.url, "null");
    assert.equal(none.status, 403);
    // the page itself holds no credential: no cookie, a strict policy, no referrer
    const own = await fetch(view.url);
    assert.equal(own.headers.get("set-cookie"), null);
    assert.match(own.headers.get("content-security-policy") ?? "", /script-src 'self'/);
    assert.equal(own.headers.get("referrer-policy"), "no-referrer");
    assert.equal(own.headers.get("access-control-allow-origin"), null);
  });

  test("a view ends with its session: the URL says gone, the open view is closed", async () => {
    const other = await hub.connect(auth(KEY_A));
    await call(other, "browser_navigate", { url: appUrl });
    const ending = await liveView(other);
    const page = await (await browser.newContext()).newPage();
    await page.goto(ending.url);
    await until("frames", async () => (await stateOf(page)).frames >= 1);
    await call(other, "hub_end_session");
    await until("the open view was closed", async () => (await stateOf(page)).closed !== "");
    const gone = await fetch(ending.url);
    assert.equal(gone.status, 410);
    assert.match(await gone.text(), /session ended/);
    assert.equal((await socketTo(ending.url, hub.origin)).status, 410);
    await page.close();
  });
});
