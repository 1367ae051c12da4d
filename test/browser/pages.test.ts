// Driving pages through the hub with real Chromium: forms, clicks, keyboard, history, tabs,
// screenshots, downloads, dialogs, console, content extraction and ref errors.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { PNG } from "pngjs";
import { evaluate, fails, ok, refOf, startHarness, textOf, type Harness } from "./harness.js";

describe("browser pages", () => {
  let h: Harness;
  let c: Client;
  const url = (p: string) => `${h.site.origin}${p}`;

  before(async () => {
    h = await startHarness();
    c = await h.hub.connect();
  });
  after(async () => h?.stop());

  test("a form is filled and submitted", async () => {
    const snap = textOf(await ok(c, "navigate", { url: url("/form") }));
    const result = await ok(c, "fill", {
      fields: [
        { ref: refOf(snap, 'textbox "Name"'), value: "Ada" },
        { ref: refOf(snap, 'textbox "Email"'), value: "ada@example.test" },
        { ref: refOf(snap, 'combobox "Color"'), value: "Green" },
        { ref: refOf(snap, 'checkbox "I agree"'), value: "true" },
      ],
    });
    const submitted = textOf(await ok(c, "click", { ref: refOf(textOf(result), 'button "Send"') }));
    assert.match(submitted, /Title: Submitted/);
    assert.match(submitted, /heading "Thanks Ada"/);
    assert.equal(await evaluate(c, "document.getElementById('got').textContent"), "name=Ada&email=ada%40example.test&color=g&agree=on");
  });

  test("a click changes text, read back with evaluate (expression and function)", async () => {
    const snap = textOf(await ok(c, "navigate", { url: url("/button") }));
    const after = textOf(await ok(c, "click", { ref: refOf(snap, 'button "Press me"') }));
    assert.match(after, /Clicked!/);
    assert.equal(await evaluate(c, "document.getElementById('out').textContent"), "Clicked!");
    assert.equal(await evaluate(c, "() => document.title + '/' + location.pathname"), "Button//button");
    const viaElement = await ok(c, "evaluate", { code: "(el) => el.textContent.length", selector: "#out" });
    assert.deepEqual(viaElement.structuredContent, { result: 8 });
    assert.match(await fails(c, "evaluate", { code: "throw new Error('boom')" }), /boom/);
  });

  test("select, check/uncheck and typing with submit", async () => {
    let snap = textOf(await ok(c, "navigate", { url: url("/form") }));
    await ok(c, "select_option", { ref: refOf(snap, 'combobox "Color"'), values: ["Blue"] });
    assert.equal(await evaluate(c, "document.querySelector('select').value"), "b");
    await ok(c, "check", { selector: "input[type=checkbox]" });
    assert.equal(await evaluate(c, "document.querySelector('input[type=checkbox]').checked"), true);
    snap = textOf(await ok(c, "uncheck", { ref: refOf(snap, 'checkbox "I agree"') }));
    assert.equal(await evaluate(c, "document.querySelector('input[type=checkbox]').checked"), false);
    const done = textOf(await ok(c, "type", { ref: refOf(snap, 'textbox "Name"'), text: "Grace", submit: true }));
    assert.match(done, /heading "Thanks Grace"/);
  });

  test("keyboard: slow typing and key presses reach key handlers", async () => {
    const snap = textOf(await ok(c, "navigate", { url: url("/keys") }));
    const ref = refOf(snap, 'textbox "Keys"');
    await ok(c, "type", { ref, text: "ab", slowly: true });
    await ok(c, "press_key", { key: "ArrowLeft" });
    await ok(c, "press_key", { ref, key: "Shift+Tab" });
    assert.equal(await evaluate(c, "document.getElementById('k').value"), "ab");
    assert.equal(await evaluate(c, "document.getElementById('log').textContent.trim()"), "a b ArrowLeft Shift Tab");
  });

  test("wait_for, hover, drag and scroll", async () => {
    await ok(c, "navigate", { url: url("/later") });
    assert.match(textOf(await ok(c, "wait_for", { text: "arrived" })), /paragraph.*: arrived/);
    assert.match(await fails(c, "wait_for", { text: "never there", timeoutMs: 300 }), /Still waiting after 300 ms/);

    const snap = textOf(await ok(c, "navigate", { url: url("/dnd") }));
    assert.match(textOf(await ok(c, "hover", { ref: refOf(snap, 'button "hover me"') })), /button "hovered"/);
    await ok(c, "drag", { startSelector: "#src", endSelector: "#dst" });
    assert.equal(await evaluate(c, "document.getElementById('dst').textContent"), "dropped");

    await ok(c, "navigate", { url: url("/tall") });
    assert.match(textOf(await ok(c, "scroll", { deltaY: 500 })), /scroll position is x=0, y=500/);
  });

  test("back and forward move through history", async () => {
    const a = textOf(await ok(c, "navigate", { url: url("/a") }));
    assert.match(textOf(await ok(c, "click", { ref: refOf(a, 'link "to B"') })), /Title: Page B/);
    assert.match(textOf(await ok(c, "back")), /Title: Page A/);
    assert.match(textOf(await ok(c, "forward")), /Title: Page B/);
    assert.match(textOf(await ok(c, "reload")), /Title: Page B/);
  });

  test("tabs are opened, listed, selected and closed", async () => {
    await ok(c, "navigate", { url: url("/a") });
    const opened = textOf(await ok(c, "tabs", { action: "new", url: url("/b") }));
    assert.match(opened, /Opened tab 1/);
    assert.match(opened, /Title: Page B/);
    const list = await ok(c, "tabs", { action: "list" });
    const tabs = (list.structuredContent as { tabs: { url: string; current: boolean }[] }).tabs;
    assert.deepEqual(
      tabs.map((t) => [new URL(t.url).pathname, t.current]),
      [
        ["/a", false],
        ["/b", true],
      ],
    );
    assert.match(textOf(await ok(c, "tabs", { action: "select", index: 0 })), /Title: Page A/);
    // A page opening a tab itself is announced.
    const popup = textOf(await ok(c, "navigate", { url: url("/popup") }));
    assert.match(textOf(await ok(c, "click", { ref: refOf(popup, 'link "open B"') })), /opened a new tab 2/);
    await ok(c, "tabs", { action: "close", index: 2 });
    const closed = textOf(await ok(c, "tabs", { action: "close", index: 1 }));
    assert.match(closed, /Closed tab 1/);
    const left = (await ok(c, "tabs", { action: "list" })).structuredContent as { tabs: unknown[] };
    assert.equal(left.tabs.length, 1);
    assert.match(await fails(c, "tabs", { action: "select", index: 5 }), /No tab 5/);
  });

  test("screenshots decode as PNGs of the viewport size, and long pages are scaled down", async () => {
    await ok(c, "navigate", { url: url("/tall") });
    await ok(c, "resize", { width: 800, height: 600 });
    const shot = await ok(c, "screenshot");
    const image = shot.content.find((x) => x.type === "image");
    assert.ok(image && image.type === "image");
    assert.equal(image.mimeType, "image/png");
    const png = PNG.sync.read(Buffer.from(image.data, "base64"));
    assert.deepEqual([png.width, png.height], [800, 600]);
    // Near the top of a red-to-blue gradient (inside the body margin): red dominates.
    const at = (50 * png.width + 50) * 4;
    assert.ok(png.data[at] > 200 && png.data[at + 2] < 60, `unexpected pixel ${png.data.subarray(at, at + 4).join(",")}`);

    const full = await ok(c, "screenshot", { fullPage: true });
    const fullImage = full.content.find((x) => x.type === "image");
    assert.ok(fullImage && fullImage.type === "image");
    const fullPng = PNG.sync.read(Buffer.from(fullImage.data, "base64"));
    assert.ok(fullPng.height <= 1568 && fullPng.height > 1000, `full page is ${fullPng.width}x${fullPng.height}`);
    assert.ok(fullPng.height > fullPng.width * 2, "the full page keeps its tall aspect ratio");

    const element = await ok(c, "screenshot", { selector: "div" });
    const elImage = element.content.find((x) => x.type === "image");
    assert.ok(elImage && elImage.type === "image");
    const elPng = PNG.sync.read(Buffer.from(elImage.data, "base64"));
    assert.equal(Math.round((elPng.width / elPng.height) * 100), Math.round((600 / 3000) * 100));
    await ok(c, "resize", { width: 1280, height: 720 });
  });

  test("a download lands in the workspace's downloads folder", async () => {
    const snap = textOf(await ok(c, "navigate", { url: url("/download") }));
    const result = textOf(await ok(c, "click", { ref: refOf(snap, 'link "get the file"') }));
    assert.match(result, /Downloaded downloads\/report\.txt/);
    assert.equal(fs.readFileSync(path.join(h.workspace, "downloads", "report.txt"), "utf8"), "downloaded content\n");
  });

  test("a dialog blocks the page until handled", async () => {
    const snap = textOf(await ok(c, "navigate", { url: url("/dialog") }));
    const ask = refOf(snap, 'button "Ask"');
    const opened = textOf(await ok(c, "click", { ref: ask }));
    assert.match(opened, /A confirm dialog is open: "Proceed\?"/);
    assert.match(textOf(await ok(c, "snapshot")), /A confirm dialog is open/);
    assert.match(await fails(c, "click", { ref: ask }), /answer it with browser_handle_dialog first/);
    assert.match(textOf(await ok(c, "handle_dialog", { accept: false })), /paragraph.*: "?no"?$/m);
    await ok(c, "click", { ref: ask });
    assert.match(textOf(await ok(c, "handle_dialog", { accept: true })), /paragraph.*: "?yes"?$/m);
    assert.match(await fails(c, "handle_dialog", { accept: true }), /No dialog is open/);
  });

  test("console messages and network requests are captured", async () => {
    await ok(c, "navigate", { url: url("/console") });
    const all = await ok(c, "console_messages");
    const messages = (all.structuredContent as { messages: { type: string; text: string }[] }).messages;
    assert.ok(
      messages.some((m) => m.type === "log" && m.text === "hello from the page"),
      textOf(all),
    );
    const errors = await ok(c, "console_messages", { level: "error" });
    assert.deepEqual(
      (errors.structuredContent as { messages: { text: string }[] }).messages.map((m) => m.text),
      ["something broke"],
    );
    const net = await ok(c, "network_requests");
    assert.match(textOf(net), new RegExp(`GET ${url("/console")} \\[document\\] → 200`));
    // an unknown tab is an error naming it and the open tabs, not an empty list
    for (const tool of ["console_messages", "network_requests"]) {
      assert.match(await fails(c, tool, { tab: 7 }), new RegExp(`No tab 7 in this session; open tabs are 0: ${url("/console")}`));
    }
  });

  test("a stale ref is refused with advice to take a new snapshot", async () => {
    const many = textOf(await ok(c, "navigate", { url: url("/many") }));
    const ref = refOf(many, 'button "Button 29"');
    await ok(c, "navigate", { url: url("/a") });
    assert.match(await fails(c, "click", { ref }), /Take a new browser_snapshot/);
    assert.match(await fails(c, "click", { ref: "nonsense" }), /not a ref/);
    assert.match(await fails(c, "click", { selector: "#does-not-exist" }), /No element matches selector/);
    assert.match(await fails(c, "click", {}), /give ref .* or selector/);
  });

  test("text, Markdown, links and a bounded snapshot read the page", async () => {
    await ok(c, "navigate", { url: url("/a") });
    assert.match(textOf(await ok(c, "get_text")), /Page A\s+to B/);
    const md = await ok(c, "get_markdown");
    assert.match(textOf(md), new RegExp(`# Page A[\\s\\S]*\\[to B\\]\\(${url("/b")}\\)`));
    const links = await ok(c, "links");
    assert.deepEqual((links.structuredContent as { links: unknown[] }).links, [{ text: "to B", href: url("/b") }]);
    assert.equal((links.structuredContent as { nextOffset: number | null }).nextOffset, null);
    assert.match(await fails(c, "links", { offset: 5 }), /offset 5 is past the end \(links: 1, offsets 0-0\)/);

    await ok(c, "navigate", { url: url("/many") });
    const first = textOf(await ok(c, "snapshot", { limit: 200 }));
    const next = first.match(/offset=(\d+)/);
    assert.ok(next, first);
    const second = textOf(await ok(c, "snapshot", { offset: Number(next[1]), limit: 200 }));
    assert.match(second, new RegExp(`characters ${next[1]}-`));
    // the snapshot's structured output pages like every other tool's: offset=nextOffset to null
    let offset: number | null = 0;
    let pages = 0;
    let totalChars = 0;
    while (offset !== null) {
      const page = (await ok(c, "snapshot", { offset, limit: 500 })).structuredContent as { offset: number; nextOffset: number | null; totalChars: number };
      assert.equal(page.offset, offset);
      totalChars = page.totalChars;
      offset = page.nextOffset;
      assert.ok(++pages <= 1000);
    }
    assert.equal(pages, Math.ceil(totalChars / 500));
  });

  test("uploads stay inside the workspace; pdf saves into it, and a folder is refused clearly", async () => {
    fs.writeFileSync(path.join(h.workspace, "local.html"), "<title>Local</title><input type=file aria-label=Pick>");
    assert.match(textOf(await ok(c, "navigate", { url: `file://${path.join(h.workspace, "local.html")}` })), /Title: Local/);
    assert.match(await fails(c, "navigate", { url: "javascript:alert(1)" }), /not allowed/);

    fs.writeFileSync(path.join(h.workspace, "up.txt"), "upload me");
    await ok(c, "upload_file", { selector: "input[type=file]", paths: ["up.txt"] });
    assert.equal(await evaluate(c, "document.querySelector('input').files[0].name"), "up.txt");
    assert.match(await fails(c, "upload_file", { selector: "input[type=file]", paths: ["/etc/hostname"] }), /outside the workspace/);

    const saved = await ok(c, "pdf", { path: "out/page.pdf" });
    assert.deepEqual(Object.keys(saved.structuredContent ?? {}).sort(), ["bytes", "path"]);
    assert.equal(
      fs
        .readFileSync(path.join(h.workspace, "out", "page.pdf"))
        .subarray(0, 5)
        .toString(),
      "%PDF-",
    );
    const folder = await fails(c, "pdf", { path: "out" });
    assert.match(folder, /'out' is a folder; give a file path/);
    assert.doesNotMatch(folder, /EISDIR/);
  });
});
