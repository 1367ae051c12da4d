// What a page (or another local process) must not reach: no CDP port unless the operator opens
// one, no file: document ever rendered (workspace files come through the workspace origin), and
// no workspace file handed to a foreign page. Each attack is run as a hostile page would.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { PNG } from "pngjs";
import { evaluate, fails, newChromiumListeners, ok, processTree, refOf, startHarness, tcpListeners, textOf, type Harness } from "./harness.js";

const PASSWD = /root:x?:0:0/;
const WS = "http://workspace.agentbox.invalid";

interface Tab {
  url: string;
}

describe("browser isolation", () => {
  let h: Harness;
  let c: Client;
  let listenersBefore: Map<string, number>;
  const ws = (rel: string) => `file://${path.join(h.workspace, rel)}`;
  const write = (rel: string, content: string | Buffer) => {
    fs.mkdirSync(path.dirname(path.join(h.workspace, rel)), { recursive: true });
    fs.writeFileSync(path.join(h.workspace, rel), content);
  };

  /** Every tab's URL, snapshot and frame URLs: none may show a file: document or /etc/passwd. */
  async function assertNoFileDocument(): Promise<void> {
    const tabs = ((await ok(c, "tabs", { action: "list" })).structuredContent as { tabs: Tab[] }).tabs;
    for (let i = 0; i < tabs.length; i++) {
      assert.doesNotMatch(tabs[i].url, /^file:/, `tab ${i} shows a file: document`);
      const snap = textOf(await ok(c, "tabs", { action: "select", index: i }));
      assert.doesNotMatch(snap, PASSWD, `tab ${i} shows /etc/passwd`);
      assert.doesNotMatch(textOf(await ok(c, "get_text")), PASSWD);
      const frames = (await evaluate(
        c,
        "[...document.querySelectorAll('iframe')].map((f) => { try { return f.contentDocument?.body?.innerText ?? '(no access)' } catch { return '(cross-origin)' } })",
      )) as string[];
      for (const text of frames) assert.doesNotMatch(text, PASSWD);
    }
  }

  before(async () => {
    h = await startHarness();
    listenersBefore = tcpListeners(); // the hub is up; Chromium starts with the first browser call
    c = await h.hub.connect();
  });
  after(async () => h?.stop());

  test("by default Chromium has no debugging port, listens on nothing, and info says how to turn the endpoint on", async () => {
    await ok(c, "navigate", { url: `${h.site.origin}/a` });
    const result = await ok(c, "info");
    const data = result.structuredContent as { cdpEnabled: boolean; pid: number; webSocketDebuggerUrl?: string };
    assert.equal(data.cdpEnabled, false);
    assert.equal(data.webSocketDebuggerUrl, undefined);
    assert.match(textOf(result), /CDP endpoint is off.*AGENTBOX_CDP_PORT/);
    const tree = processTree(data.pid);
    assert.ok(tree.length > 1, "Chromium and its helpers were found");
    for (const pid of tree) {
      const args = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      assert.ok(!args.some((a) => a.startsWith("--remote-debugging-port")), `pid ${pid} has a debugging port: ${args.join(" ")}`);
    }
    assert.deepEqual(newChromiumListeners(data.pid, listenersBefore), []);
  });

  test("a workspace page's file: iframe, image and links do not show other files; relative links and images work", async () => {
    const png = new PNG({ width: 3, height: 2 });
    write("site/pic.png", PNG.sync.write(png));
    write("site/other.html", "<title>Other</title><p>the other page</p>");
    write(
      "site/index.html",
      `<title>Local</title><img id=pic src="pic.png"><a href="other.html">relative</a><a href="file:///etc/passwd">escape</a>
       <iframe src="file:///etc/passwd"></iframe><iframe src="/site/other.html"></iframe>`,
    );
    const snap = textOf(await ok(c, "navigate", { url: ws("site/index.html") }));
    assert.match(snap, new RegExp(`URL: ${WS}/site/index\\.html`));
    assert.match(snap, /the other page/, "a workspace iframe loads");
    assert.equal(await evaluate(c, "document.getElementById('pic').naturalWidth"), 3);
    await assertNoFileDocument();
    await ok(c, "click", { ref: refOf(snap, 'link "escape"') });
    await assertNoFileDocument();
    assert.equal(await evaluate(c, "location.href"), `${WS}/site/index.html`);
    const other = textOf(await ok(c, "click", { ref: refOf(snap, 'link "relative"') }));
    assert.match(other, /Title: Other/);
  });

  test("location, window.open and meta refresh to file: never render it", async () => {
    write("jump.html", "<title>Jump</title>");
    await ok(c, "navigate", { url: ws("jump.html") });
    await ok(c, "evaluate", { code: "location.href = 'file:///etc/passwd'" });
    await assertNoFileDocument();
    await ok(c, "evaluate", { code: "window.open('file:///etc/passwd'); window.open('file:///etc/')" });
    await assertNoFileDocument();
    write("refresh.html", `<meta http-equiv="refresh" content="0;url=file:///etc/passwd"><title>Refresh</title>`);
    await ok(c, "navigate", { url: ws("refresh.html") });
    await ok(c, "wait_for", { time: 0.5 });
    await assertNoFileDocument();
  });

  test("a data: page's file: iframe shows nothing, and navigate refuses file: outside the workspace", async () => {
    const navigated = await ok(c, "navigate", {
      url: "data:text/html,<title>Data</title><iframe src='file:///etc/passwd'></iframe><iframe src='file:///etc/'></iframe>",
    });
    // the refused frames are let go (to about:blank), and the agent is told, not kept waiting by them
    assert.match(textOf(navigated), /Blocked file:\/\/\/etc\/passwd in a frame: file: documents are not allowed/);
    assert.match(textOf(navigated), /Blocked file:\/\/\/etc\/ in a frame/);
    await assertNoFileDocument();
    assert.match(await fails(c, "navigate", { url: "file:///etc/passwd" }), /outside the workspace/);
    fs.symlinkSync("/etc/passwd", path.join(h.workspace, "passwd-link"));
    assert.match(await fails(c, "navigate", { url: ws("passwd-link") }), /outside the workspace/);
    await assertNoFileDocument();
  });

  test("the workspace origin serves only workspace files: symlinks out and missing files are refused", async () => {
    write("dir/a.txt", "alpha");
    write(
      "links.html",
      `<title>Links</title><iframe src="passwd-link2"></iframe><iframe src="/../../etc/passwd"></iframe><iframe src="/%2e%2e/%2e%2e/etc/passwd"></iframe>`,
    );
    fs.symlinkSync("/etc/passwd", path.join(h.workspace, "passwd-link2"));
    await ok(c, "navigate", { url: ws("links.html") });
    await assertNoFileDocument();
    assert.match(textOf(await ok(c, "navigate", { url: `${WS}/no/such/file.html` })), /HTTP 404/);
    const listing = textOf(await ok(c, "navigate", { url: ws("dir") }));
    assert.match(listing, new RegExp(`URL: ${WS}/dir/`));
    assert.match(listing, /link "a\.txt"/);
  });

  test("a foreign page cannot frame workspace files", async () => {
    write("secret.txt", "workspace secret 42");
    write("secret.html", "<title>Secret</title><p>workspace secret 42</p>");
    await ok(c, "navigate", { url: `data:text/html,<title>Foreign</title><iframe src="${WS}/secret.html"></iframe><iframe src="${WS}/secret.txt"></iframe>` });
    const snap = textOf(await ok(c, "snapshot"));
    assert.doesNotMatch(snap, /workspace secret/);
    assert.match(snap, /only reachable from workspace pages/);
    // the model itself still opens the file
    assert.match(textOf(await ok(c, "navigate", { url: ws("secret.html") })), /workspace secret 42/);
  });
});
