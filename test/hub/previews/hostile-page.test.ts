// A previewed app is the agent's, so its pages are hostile to everyone who opens them: in real
// Chromium, such a page cannot read the hub's MCP answers or another tenant's preview. In the
// subdomain form it is another origin (CORS lets it read nothing of the hub or other previews); in
// the path form it shares the hub's origin, where the hub holds no cookie and answers only to a key
// sent in a header, and no worker of the app may take the origin's other paths.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { startHub, type TestHub } from "../../helpers/hub.js";
import { launch } from "../../playground/browser.js";
import { tenantPort, preview, startApp, type PreviewData } from "./apps.js";

const KEY_A = `alice-${randomBytes(16).toString("hex")}`;
const KEY_B = `bob-${randomBytes(16).toString("hex")}`;
const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "page", version: "1" } },
};

/** What a script of the page gets from a fetch: the status and text it may read, or the error that hides them. */
async function readFrom(page: Page, url: string, init: { method?: string; body?: string } = {}): Promise<string> {
  return page.evaluate(
    async ({ url, init }) => {
      try {
        const res = await fetch(url, {
          ...init,
          credentials: "include",
          headers: init.body ? { "Content-Type": "application/json", Accept: "application/json, text/event-stream" } : {},
        });
        return `${res.status} ${await res.text()}`;
      } catch (err) {
        return `blocked: ${(err as Error).name}`;
      }
    },
    { url, init },
  );
}

describe("a hostile previewed page in Chromium", () => {
  let hub: TestHub;
  let browser: Browser;
  let page: Page;
  let hers: PreviewData;
  let his: PreviewData;

  before(async () => {
    hub = await startHub({
      servers: ["terminal"],
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
      env: { AGENTBOX_PREVIEW_DOMAIN: "localhost" },
    });
    const alice = await hub.connect({ headers: auth(KEY_A) });
    const bob = await hub.connect({ headers: auth(KEY_B) });
    const [alicePort, bobPort] = [await tenantPort(hub, KEY_A), await tenantPort(hub, KEY_B)];
    await startApp(alice, alicePort, "alice-private");
    await startApp(bob, bobPort, "bob-hostile");
    hers = await preview(alice, alicePort);
    his = await preview(bob, bobPort);
    browser = await launch();
    page = await (await browser.newContext()).newPage();
  });
  after(async () => {
    await browser?.close();
    await hub?.stop();
  });

  test("in the subdomain form it reads nothing of the hub's /mcp or of another preview", async () => {
    await page.goto(his.subdomainUrl!);
    assert.match(await page.content(), /page of bob-hostile/);
    assert.equal(await readFrom(page, `${hub.origin}/mcp`, { method: "POST", body: JSON.stringify(INITIALIZE) }), "blocked: TypeError");
    assert.equal(await readFrom(page, `${hub.origin}/`), "blocked: TypeError");
    assert.equal(await readFrom(page, hers.subdomainUrl!), "blocked: TypeError");
    assert.equal(await readFrom(page, hers.url), "blocked: TypeError");
    // its own app it reads, as any page does
    assert.match(await readFrom(page, "/headers"), /^200 .*bob-hostile/);
  });

  test("in the path form the hub answers its script only as a stranger without a key", async () => {
    await page.goto(his.url);
    assert.match(await page.content(), /page of bob-hostile/);
    const mcp = await readFrom(page, "/mcp", { method: "POST", body: JSON.stringify(INITIALIZE) });
    assert.match(mcp, /^401 .*requires an API key/);
    assert.match(await readFrom(page, "/"), /^401 /);
    assert.equal(await page.evaluate(() => document.cookie), "");
    // another tenant's app at a path it does not know the token of: nothing
    assert.match(await readFrom(page, hers.url.replace(/[a-z2-7]{4}\/$/, "aaaa/")), /^404 Preview not found/);
  });

  test("in the path form its service worker cannot take the hub's origin, only its own prefix", async () => {
    await page.goto(his.url);
    const whole = await page.evaluate(() =>
      navigator.serviceWorker.register("sw.js", { scope: "/" }).then(
        (r) => `registered ${r.scope}`,
        (err: Error) => `refused: ${err.name}`,
      ),
    );
    assert.equal(whole, "refused: SecurityError");
    const own = await page.evaluate(() =>
      navigator.serviceWorker.register("sw.js").then(
        (r) => r.scope,
        (err: Error) => `refused: ${err.name}`,
      ),
    );
    assert.equal(own, new URL(his.url).href);
  });
});
