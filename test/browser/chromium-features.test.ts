// Memory per agent (issue 41): full Chromium preloaded its omnibox popup, a WebUI page nobody
// sees, in a renderer process of every browser context, so each client session cost two renderers
// instead of one. Those features are off; and since Chromium honours only the last
// --disable-features switch, ours must still hold every feature Playwright's own switch turns off.
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { ChromiumHost, UNUSED_UI_FEATURES } from "../../servers/browser/chromium.js";
import { createLogger } from "../../servers/lib/log.js";
import { descendantsOf } from "../../servers/lib/proc-table.js";
import { startSite, type Site } from "../fixtures/browser/site.js";

const cmdlineOf = (pid: number) => fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
/** Zygote-forked processes rewrite their command line into one string: look for the switch in it. */
const isRenderer = (pid: number) => {
  try {
    return cmdlineOf(pid).join(" ").includes("--type=renderer");
  } catch {
    return false; // exited meanwhile
  }
};

describe("Chromium's processes per browser context", () => {
  let host: ChromiumHost;
  let browser: Browser;
  let chromiumPid: number;
  let site: Site;

  before(async () => {
    site = await startSite();
    host = new ChromiumHost(createLogger({}, { write: () => undefined }));
    browser = await host.browser();
    chromiumPid = host.pid()!;
    assert.ok(chromiumPid, "Chromium's main process is found");
  });
  after(async () => {
    await host?.close();
    await site?.close();
  });

  test("the last --disable-features switch keeps every feature Playwright turns off, and turns off the unused omnibox UI", () => {
    const switches = cmdlineOf(chromiumPid).filter((a) => a.startsWith("--disable-features="));
    const features = (arg: string) => arg.slice("--disable-features=".length).split(",");
    const effective = new Set(features(switches.at(-1)!));
    for (const arg of switches) {
      for (const feature of features(arg)) assert.ok(effective.has(feature), `${feature} (from ${arg.slice(0, 80)}…) is still off`);
    }
    for (const feature of UNUSED_UI_FEATURES) assert.ok(effective.has(feature), `${feature} is off`);
  });

  test("a session's page costs one renderer process, not two", async () => {
    const sessions = 3;
    const before = descendantsOf(chromiumPid).filter((p) => isRenderer(p.pid)).length;
    for (let i = 0; i < sessions; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${site.origin}/a`);
    }
    const cdp = await browser.newBrowserCDPSession();
    const { targetInfos } = (await cdp.send("Target.getTargets")) as { targetInfos: Array<{ type: string; url: string }> };
    await cdp.detach();
    assert.deepEqual(
      targetInfos.filter((t) => t.type !== "page").map((t) => t.url),
      [],
      "no browser UI pages beside the sessions' own",
    );
    const after = descendantsOf(chromiumPid).filter((p) => isRenderer(p.pid)).length;
    // each page's renderer, and at most one spare Chromium keeps ready for the next new site
    assert.ok(after - before <= sessions + 1, `${after - before} renderers for ${sessions} pages`);
  });
});
