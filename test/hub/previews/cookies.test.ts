// Cookies in real Chromium, with two tenants' previews open in one browser: a page of one preview
// plants cookies (for the whole origin, for its own path, and in the subdomain form for the parent
// domain) and reads what it can, and the other tenant's app receives none of it, either way round;
// each app's own Set-Cookie still comes back to it, so apps with sessions keep working. In the path
// form both previews share the hub's origin; in the subdomain form each has its own, under one
// parent domain.
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
// previews at <port>-<token>.preview.localhost: a parent domain a page may set cookies for, as a
// real wildcard domain is (Chromium refuses a cookie for "localhost" itself)
const DOMAIN = "preview.localhost";

/** The cookies the app behind a page's preview receives (name=value, sorted). */
async function appGets(page: Page): Promise<string[]> {
  const text = await page.evaluate(() => fetch("headers").then((res) => res.text()));
  const cookie = (JSON.parse(text) as { headers: { cookie?: string } }).headers.cookie;
  return cookie ? cookie.split("; ").sort() : [];
}

/** The app signs the page's visitor in: a session cookie scripts cannot read, a setting they can. */
async function signIn(page: Page): Promise<void> {
  assert.equal(await page.evaluate(() => fetch("session").then((res) => res.text())), "signed in");
}

/** What a page's script can do with cookies: write these lines to document.cookie, then read it. */
function script(page: Page, lines: string[]): Promise<string> {
  return page.evaluate((written) => {
    for (const line of written) document.cookie = line;
    return document.cookie;
  }, lines);
}

/** Lines a hostile page writes, each value carrying `mark`: for the whole origin, its own path, and the parent domain. */
function plants(mark: string, subdomain: boolean): string[] {
  return [
    `sid=${mark}; path=/`,
    `theme=${mark}; path=/`,
    `planted=${mark}`,
    ...(subdomain ? [`sid=${mark}; path=/; domain=${DOMAIN}`, `tossed=${mark}; path=/; domain=${DOMAIN}`] : []),
  ];
}

describe("cookies of two tenants' previews in one Chromium", () => {
  let hub: TestHub;
  let browser: Browser;
  let hers: PreviewData;
  let his: PreviewData;

  before(async () => {
    hub = await startHub({
      servers: ["terminal"],
      config: { tenants: { alice: { apiKey: KEY_A }, bob: { apiKey: KEY_B } } },
      env: { AGENTBOX_PREVIEW_DOMAIN: DOMAIN },
    });
    const alice = await hub.connect({ headers: auth(KEY_A) });
    const bob = await hub.connect({ headers: auth(KEY_B) });
    const [alicePort, bobPort] = [await tenantPort(hub, KEY_A), await tenantPort(hub, KEY_B)];
    await startApp(alice, alicePort, "alice-app");
    await startApp(bob, bobPort, "bob-app");
    hers = await preview(alice, alicePort);
    his = await preview(bob, bobPort);
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await hub?.stop();
  });

  for (const form of ["path", "subdomain"] as const) {
    test(`in the ${form} form each app gets its own cookies and nothing a page of the other wrote`, async () => {
      const subdomain = form === "subdomain";
      const context = await browser.newContext();
      const [alicePage, bobPage] = [await context.newPage(), await context.newPage()];
      await alicePage.goto(subdomain ? hers.subdomainUrl! : hers.url);
      await bobPage.goto(subdomain ? his.subdomainUrl! : his.url);
      assert.match(await alicePage.content(), /page of alice-app/);
      assert.match(await bobPage.content(), /page of bob-app/);

      // an app's own cookies come back to it, whatever the page's tab
      await signIn(alicePage);
      await signIn(bobPage);
      const aliceSession = ["sid=alice-app-session", "theme=alice-app-theme"];
      const bobSession = ["sid=bob-app-session", "theme=bob-app-theme"];
      assert.deepEqual(await appGets(alicePage), aliceSession);
      assert.deepEqual(await appGets(bobPage), bobSession);

      // alice's page plants cookies: bob's app gets his session and nothing else
      const aliceSees = await script(alicePage, plants("ALICE", subdomain));
      assert.deepEqual(await appGets(bobPage), bobSession);
      // the same in her own jar, which her script can name (her app's readable cookie shows it)
      const jar = /(pv_[a-z2-7]{16}_)theme=alice-app-theme/.exec(aliceSees)?.[1];
      assert.ok(jar, `her script sees her app's readable cookie under the hub's name: ${aliceSees}`);
      await script(alicePage, [`${jar}fromjar=ALICE; path=/`, ...(subdomain ? [`${jar}tossedjar=ALICE; path=/; domain=${DOMAIN}`] : [])]);
      assert.deepEqual(await appGets(bobPage), bobSession);
      // and his page reads nothing of what her app set
      assert.doesNotMatch(await script(bobPage, []), /alice-app/);

      // the other way round
      await script(bobPage, plants("BOB", subdomain));
      const aliceGets = await appGets(alicePage);
      assert.ok(!aliceGets.some((c) => /BOB|bob-app/.test(c)), `alice's app got: ${aliceGets}`);
      assert.ok(aliceGets.includes("sid=alice-app-session") && aliceGets.includes("theme=alice-app-theme"), `alice's app got: ${aliceGets}`);
      assert.doesNotMatch(await script(alicePage, []), /bob-app/);
      // a cookie her page wrote reaches her app only under the name the hub gave her app's cookies
      assert.ok(aliceGets.includes("fromjar=ALICE"), `alice's app got: ${aliceGets}`);
      assert.ok(!aliceGets.includes("planted=ALICE"), `alice's app got: ${aliceGets}`);
      await context.close();
    });
  }
});
