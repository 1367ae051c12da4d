// A recorded page is the agent's choice, and the hub's trace viewer draws its DOM snapshots at the
// hub's origin, in the tab where a person may keep the playground's key. Here a hostile page tries
// every way to run script (inline, src, handlers, javascript: URLs, srcdoc, SVG, object/embed, shadow
// DOM, script added after load) and takes over Playwright's snapshotter to put into its snapshots
// what no real DOM holds: markup that breaks out of attribute names, and frames and refreshes that
// load the agent's own page at the hub's origin (a preview in the path form). The agent records it
// through the hub; a person opens the recording in the hub's viewer after keeping a key in the tab.
// Controls show the vectors work: opened directly, the page runs each one; the agent's page, opened
// in the playground's tab, reads the key; in Playwright's viewer as it ships, the snapshots load the
// agent's page (so they did in the hub's viewer before its policies, and it read the key there). In
// the hub's viewer (hub/playground/trace-viewer.ts, trace-viewer-sw.ts) nothing of it runs, and no
// request reaches the attacker: the viewer's service worker answers a snapshot's resources from the
// trace, and the hub's policies refuse its frames.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Browser, Page } from "playwright-core";
import { call, startHub, textOf, type TestHub } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import { launch } from "../../playground/browser.js";
import { freePort, preview, startInTerminal } from "./apps.js";
import { recordingsOf } from "./recording-helpers.js";
import { DIRECT_PLAIN_VECTORS, DIRECT_SCRIPT_VECTORS, INJECTED_ROUTES, agentPage, startAttacker, type Attacker, type Hit } from "./trace-attack-page.js";
import { openViewer, serveStockViewer, settled, visitSnapshots } from "./trace-viewer-driver.js";

const KEY = `alice-${randomBytes(16).toString("hex")}`;
// what a person's playground keeps in the tab (hub/playground/web/connection.ts: sessionStorage, "agentbox.apiKey"), and in localStorage for good measure
const PERSONS_KEY = `persons-key-${randomBytes(12).toString("hex")}`;
const INPUT_ACTIONS = /^(Click|Fill|Type)/;

async function ok(client: Client, tool: string, args: Record<string, unknown>): Promise<string> {
  const result = await call(client, tool, args);
  assert.ok(!result.isError, `${tool}: ${textOf(result)}`);
  return textOf(result);
}

/** The person's tab: the playground's page, with the key kept as the playground keeps it. */
async function playgroundTab(browser: Browser, hub: TestHub): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1360, height: 860 } })).newPage();
  await page.goto(`${hub.origin}/playground`);
  await page.evaluate((key) => {
    sessionStorage.setItem("agentbox.apiKey", key);
    localStorage.setItem("agentbox.apiKey", key);
  }, PERSONS_KEY);
  return page;
}

/** Until each vector shows among the hits `of` gives (or the wait ends): the vectors that never did. */
async function neverSeen(vectors: string[], of: () => Hit[], ms = 30_000): Promise<string[]> {
  const missing = () => vectors.filter((v) => !of().some((h) => h.vector === v));
  await until(`${vectors.join(", ")} to reach the attacker`, () => missing().length === 0, ms).catch(() => undefined);
  return missing();
}

const vectorsOf = (hits: Hit[]) => [...new Set(hits.map((h) => h.vector ?? h.path))].sort();

/** Each vector whose script ran, where it ran and whether it read the person's key there. */
function ranWhere(hits: Hit[]): string[] {
  return vectorsOf(hits).map((vector) => {
    const data = hits.find((h) => h.vector === vector)?.data ?? "";
    const origin = /"origin":"([^"]*)"/.exec(data)?.[1] ?? "?";
    return `${vector} at ${origin}${data.includes(PERSONS_KEY) ? ", read the key" : ""}`;
  });
}

describe("a hostile page recorded by the agent, opened in the hub's trace viewer", () => {
  let hub: TestHub;
  let agent: Client;
  let attacker: Attacker;
  let browser: Browser;
  let recording: { url: string; bytes: Buffer };

  before(async () => {
    attacker = await startAttacker();
    hub = await startHub({ servers: ["browser", "terminal"], config: { tenants: { alice: { apiKey: KEY } } } });
    agent = await hub.connect({ headers: { Authorization: `Bearer ${KEY}` } });
    // the agent serves its own page at the hub's origin: a preview in the path form
    const port = await freePort();
    const page = Buffer.from(agentPage(attacker)).toString("base64");
    await startInTerminal(
      agent,
      `mkdir -p site && echo ${page} | base64 -d > site/index.html && python3 -m http.server ${port} --bind 127.0.0.1 --directory site`,
      /Serving HTTP/,
    );
    attacker.agentPage = (await preview(agent, port)).url;
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await hub?.stop();
    await attacker?.close();
  });

  test("control: opened directly in Chromium, every vector of the page runs or fetches", async () => {
    attacker.phase = "direct";
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${attacker.origin}/hostile`);
    await page.click("#jslink");
    await page.click("#send");
    assert.deepEqual(await neverSeen(DIRECT_SCRIPT_VECTORS, () => attacker.scripts("direct")), [], "vectors whose script did not run");
    const plain = () => attacker.hits.filter((h) => h.phase === "direct" && h.path !== "/beacon");
    assert.deepEqual(await neverSeen(DIRECT_PLAIN_VECTORS, plain), [], "vectors that fetched nothing");
    await page.context().close();
    await attacker.quiet();
  });

  test("control: the agent's page at the hub's origin, opened in the playground's tab, reads the key", async () => {
    attacker.phase = "agent-page";
    const page = await playgroundTab(browser, hub);
    await page.goto(attacker.agentPage);
    const hit = await until("the agent's page to call the beacon", () => attacker.scripts("agent-page").find((h) => h.vector === "agent-page-opened"));
    assert.ok(hit.data?.includes(PERSONS_KEY), hit.data ?? "");
    await page.context().close();
    await attacker.quiet();
  });

  test("the agent records the page through the hub, its snapshotter taken over, and downloads the trace", async () => {
    attacker.phase = "record";
    await ok(agent, "browser_record", { record: true });
    await ok(agent, "browser_navigate", { url: `${attacker.origin}/hostile` });
    await ok(agent, "browser_click", { selector: "#jslink" });
    await ok(agent, "browser_click", { selector: "#send" });
    // typing "go" makes the snapshots from then on also hold the frames and the refresh
    await ok(agent, "browser_type", { selector: "#q", text: "go" });
    assert.match(await ok(agent, "browser_record", { record: false }), /Saved recording browser-/);
    await until("the page to report it took over the snapshotter", () => attacker.scripts("record").some((h) => h.vector === "hijack-installed"));
    await ok(agent, "browser_close", {});
    const listed = (await recordingsOf(agent)).find((r) => r.kind === "browser" && r.endedAt);
    assert.ok(listed, "a saved browser recording");
    const res = await fetch(listed.url);
    assert.equal(res.status, 200);
    recording = { url: listed.url, bytes: Buffer.from(await res.arrayBuffer()) };
    await attacker.quiet();
  });

  test("control: in Playwright's viewer as it ships, the snapshots load the agent's page and the attacker's", async () => {
    attacker.phase = "stock";
    const viewer = await serveStockViewer(recording.bytes);
    const page = await (await browser.newContext({ viewport: { width: 1360, height: 860 } })).newPage();
    try {
      await openViewer(page, `${viewer.origin}/trace-viewer/index.html?trace=${encodeURIComponent(`${viewer.origin}/trace.zip`)}`);
      await visitSnapshots(page, /^(Fill|Type)/);
      const injected = [...INJECTED_ROUTES.map((r) => `agent-page-${r}`), "hijack-attacker-frame"];
      assert.deepEqual(await neverSeen(injected, () => attacker.scripts("stock"), 60_000), [], "injected pages that did not load");
    } finally {
      await page.context().close();
      await viewer.close();
    }
    await attacker.quiet();
  });

  test("in the hub's viewer no script of it runs, nothing reaches the attacker, the key stays, the tab stays", async (t) => {
    attacker.phase = "viewer";
    const page = await playgroundTab(browser, hub);
    const dialogs: string[] = [];
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const viewerErrors: string[] = [];
    page.on("console", (msg) => {
      if (msg.type() === "error" && msg.location().url.includes("/trace-viewer/") && !msg.location().url.includes("/trace-viewer/snapshot/"))
        viewerErrors.push(msg.text());
    });
    const viewerUrl = `${hub.origin}/trace-viewer/index.html?trace=${encodeURIComponent(recording.url)}`;
    await openViewer(page, viewerUrl);

    const rendered: string[] = [];
    const visited = await visitSnapshots(page, INPUT_ACTIONS, async (frame, action, tab) => {
      if (/^(Fill|Type)/.test(action)) return;
      // the snapshot is drawn: the page's heading, in the viewer's frame
      if ((await frame.locator("h1").first().textContent({ timeout: 10_000 })) === "hostile page") rendered.push(`${action} ${tab}`);
      // a person clicking in it: the javascript: links, the form's button
      for (const target of ["#jslink", "#hijack-link", "#send"]) await frame.locator(target).click({ force: true, timeout: 5_000 });
    });
    t.diagnostic(`snapshots shown of: ${visited.join("; ")}`);
    assert.ok(visited.length >= 3, `the clicks and the typing: ${visited.join(", ")}`);
    assert.ok(rendered.length >= 6, `each snapshot of the clicks drawn: ${rendered.join(", ")}`);
    // the last one shown holds the refresh: refused (an error page), or the agent's page loaded
    const topSnapshots = () =>
      page
        .mainFrame()
        .childFrames()
        .map((f) => f.url());
    await until(
      "the top snapshot's refresh to go somewhere",
      () => topSnapshots().some((u) => u.startsWith("chrome-error:") || u.startsWith(attacker.agentPage)),
      30_000,
    );
    await settled(page);
    // a WebSocket of the person's browser, after all else it sent
    await page.evaluate(
      (url) => new Promise<void>((resolve) => Object.assign(new WebSocket(url), { onclose: () => resolve(), onerror: () => resolve() })),
      attacker.origin.replace(/^http/, "ws") + "/barrier",
    );
    await until("the barrier", () => attacker.hits.some((h) => h.phase === "viewer" && h.path === "/barrier"));

    t.diagnostic(`connections to the attacker: ${JSON.stringify(attacker.connections)}`);
    // Not even a plain fetch (an image, CSS url(), a prefetch): nothing tells the attacker the trace
    // was opened. Chromium may still open a bare connection ahead of a frame's navigation that the
    // policy then refuses; it carries no request, and the hub cannot stop it short of rewriting
    // Playwright's snapshots, so connections are reported, not counted.
    const reached = attacker.hits.filter((h) => h.phase === "viewer" && h.path !== "/barrier");
    const scripts = reached.filter((h) => h.path === "/beacon");
    assert.deepEqual(ranWhere(scripts), [], "scripts of the recorded page ran in the viewer");
    assert.deepEqual(vectorsOf(reached), [], "the attacker learnt the trace was opened (plain fetches)");
    assert.ok(!reached.some((h) => h.raw.includes(PERSONS_KEY)), "the key reached the attacker");
    assert.deepEqual(dialogs, []);
    assert.equal(page.url(), viewerUrl);
    assert.equal(await page.evaluate(() => sessionStorage.getItem("agentbox.apiKey")), PERSONS_KEY);
    assert.deepEqual(
      viewerErrors.filter((e) => /Content Security Policy/.test(e)),
      [],
      "the viewer's own page broke a rule of its policy",
    );
    await page.context().close();
  });
});
