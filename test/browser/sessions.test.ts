// One Chromium shared by client sessions: each session's own context (cookies, tabs), freed when
// the session ends or idles out; the operator's CDP endpoint (AGENTBOX_CDP_PORT, which these
// tests use to see every session's pages from outside); recovery after Chromium is killed.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startHub, type TestHub } from "../helpers/hub.js";
import { until as untilWithin } from "../helpers/wait.js";
import { startSite, type Site } from "../fixtures/browser/site.js";
import { evaluate, freePort, newChromiumListeners, ok, startHarness, tcpListeners, textOf, type Harness } from "./harness.js";
import { isAlive as alive } from "../../servers/lib/proc-table.js";

interface Info {
  cdpEnabled: boolean;
  webSocketDebuggerUrl: string;
  browserVersion: string;
  cdpPort: number;
  pid: number;
  tabs: number;
}

async function info(client: Client): Promise<Info> {
  return (await ok(client, "info")).structuredContent as unknown as Info;
}

/** URLs of the page targets Chromium reports on its CDP endpoint (all sessions). */
async function cdpPages(port: number): Promise<string[]> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { type: string; url: string }[];
  return targets.filter((t) => t.type === "page").map((t) => t.url);
}

/** Chromium's pages and listeners take their time to go: up to 20 s, looked at every 100 ms. */
const until = (what: string, check: () => Promise<boolean> | boolean) => untilWithin(what, check, 20_000, 100);

describe("browser sessions", () => {
  let h: Harness;
  let port: number;
  let listenersBefore: Map<string, number>;
  const url = (p: string) => `${h.site.origin}${p}`;

  before(async () => {
    port = await freePort();
    h = await startHarness({ AGENTBOX_CDP_PORT: String(port) });
    listenersBefore = tcpListeners(); // Chromium starts with the first browser call
  });
  after(async () => h?.stop());

  test("two client sessions have separate cookies and tabs", async () => {
    const alice = await h.hub.connect();
    const bob = await h.hub.connect();
    await ok(alice, "navigate", { url: url("/cookie/set?v=alice") });
    await ok(bob, "navigate", { url: url("/cookie/set?v=bob") });
    await ok(bob, "tabs", { action: "new", url: url("/b") });
    await ok(alice, "navigate", { url: url("/cookie/show") });
    await ok(bob, "navigate", { url: url("/cookie/show") });
    assert.equal(await evaluate(alice, "document.getElementById('cookie').textContent"), "who=alice");
    assert.equal(await evaluate(bob, "document.getElementById('cookie').textContent"), "who=bob");
    assert.equal((await info(alice)).tabs, 1);
    assert.equal((await info(bob)).tabs, 2);
  });

  test("with AGENTBOX_CDP_PORT, info gives the endpoint on that loopback port, answering for the same browser", async () => {
    const client = await h.hub.connect();
    await ok(client, "navigate", { url: url("/a") });
    const i = await info(client);
    assert.equal(i.cdpEnabled, true);
    assert.equal(i.cdpPort, port);
    assert.match(textOf(await ok(client, "info")), /AGENTBOX_CDP_PORT.*browser-wide/);
    // the listener check of the default-off test, seen to find this one
    assert.deepEqual(newChromiumListeners(i.pid, listenersBefore), [port]);
    assert.match(i.webSocketDebuggerUrl, new RegExp(`^ws://127\\.0\\.0\\.1:${port}/devtools/browser/`));
    const version = (await (await fetch(`http://127.0.0.1:${i.cdpPort}/json/version`)).json()) as { Browser: string; webSocketDebuggerUrl: string };
    assert.equal(version.webSocketDebuggerUrl, i.webSocketDebuggerUrl);
    assert.match(i.browserVersion, /^(Headless)?Chrome\/\d+/);
    assert.ok((await cdpPages(i.cdpPort)).includes(url("/a")));
  });

  test("a session's pages are closed when the session ends, and by close", async () => {
    const client = await h.hub.connect();
    await ok(client, "navigate", { url: url("/b?ending") });
    const { cdpPort } = await info(client);
    assert.ok((await cdpPages(cdpPort)).includes(url("/b?ending")));
    await (client.transport as StreamableHTTPClientTransport).terminateSession();
    await until("the ended session's page to close", async () => !(await cdpPages(cdpPort)).includes(url("/b?ending")));

    const other = await h.hub.connect();
    await ok(other, "navigate", { url: url("/b?closing") });
    assert.match(textOf(await ok(other, "close")), /Closed/);
    assert.ok(!(await cdpPages(cdpPort)).includes(url("/b?closing")));
    assert.equal((await info(other)).tabs, 0);
  });

  test("Chromium killed mid-session: the next call relaunches it and says the pages were lost", async () => {
    const client = await h.hub.connect();
    await ok(client, "navigate", { url: url("/a") });
    const before = await info(client);
    process.kill(before.pid, "SIGKILL");
    // no wait for the exit: the call may reach the server before it has read that Chromium died
    const result = textOf(await ok(client, "navigate", { url: url("/b") }));
    assert.ok(!alive(before.pid));
    assert.match(result, /relaunched: this session's tabs, cookies and storage were lost/);
    assert.match(result, /Title: Page B/);
    const after = await info(client);
    assert.notEqual(after.pid, before.pid);
    assert.equal(after.tabs, 1);
    assert.ok((await cdpPages(after.cdpPort)).includes(url("/b")));
  });
});

describe("browser idle expiry", () => {
  let hub: TestHub;
  let site: Site;

  before(async () => {
    site = await startSite();
    hub = await startHub({ servers: ["browser"], env: { AGENTBOX_BROWSER_IDLE_MS: "2000", AGENTBOX_CDP_PORT: String(await freePort()) } });
  });
  after(async () => {
    await hub?.stop();
    await site?.close();
  });

  test("a session's context is freed after AGENTBOX_BROWSER_IDLE_MS without use", async () => {
    const client = await hub.connect();
    await ok(client, "navigate", { url: `${site.origin}/a` });
    const { cdpPort } = await info(client);
    await until("the idle session's page to close", async () => !(await cdpPages(cdpPort)).includes(`${site.origin}/a`));
    assert.equal((await info(client)).tabs, 0);
  });
});
