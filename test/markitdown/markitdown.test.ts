// markitdown through the hub: real conversions of generated documents from every kind of source,
// paging, saving, and the errors for missing files, unsupported formats and workspace escapes.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { PNG } from "pngjs";
import { call, startHub, tempDir, textOf, type TestHub } from "../helpers/hub.js";
import { CSV, HTML, JSON_TEXT, makeDocx, makePdf, makeXlsx, makeZip } from "./fixtures.js";

const MAX_BYTES = 300_000;
let hub: TestHub;
let client: Client;
let ws: string;
let server: http.Server;
let base: string;
let fakeBin: string;

const convert = (args: Record<string, unknown>) => call(client, "markitdown_convert", args);
const structured = (r: Awaited<ReturnType<typeof convert>>) => r.structuredContent as Record<string, unknown>;

async function ok(args: Record<string, unknown>): Promise<{ text: string; data: Record<string, unknown> }> {
  const result = await convert(args);
  assert.ok(!result.isError, `convert failed: ${textOf(result)}`);
  return { text: textOf(result), data: structured(result) };
}

async function failure(args: Record<string, unknown>): Promise<string> {
  const result = await convert(args);
  assert.equal(result.isError, true, `expected an error, got: ${textOf(result).slice(0, 200)}`);
  return textOf(result);
}

before(async () => {
  ws = tempDir("agentbox-md-ws-");
  const docx = await makeDocx();
  fs.writeFileSync(path.join(ws, "paper.pdf"), await makePdf(["Hello from the PDF fixture", "Second line of text"]));
  fs.writeFileSync(path.join(ws, "report.docx"), docx);
  fs.writeFileSync(path.join(ws, "stock.xlsx"), makeXlsx());
  fs.writeFileSync(path.join(ws, "page.html"), HTML);
  fs.writeFileSync(path.join(ws, "table.csv"), CSV);
  fs.writeFileSync(path.join(ws, "config.json"), JSON_TEXT);
  fs.writeFileSync(path.join(ws, "bundle.zip"), await makeZip(docx));
  fs.writeFileSync(path.join(ws, "notes.xyz"), "what is this");
  fs.writeFileSync(path.join(ws, "broken.json"), "{ not json");
  fs.writeFileSync(path.join(ws, "long.txt"), Array.from({ length: 500 }, (_, i) => `line ${i}`).join("\n"));
  fs.mkdirSync(path.join(ws, "sub"));
  fs.symlinkSync("/etc/hostname", path.join(ws, "sub", "escape.txt"));

  // A stand-in exiftool on PATH records what it was given, so the test sees what reaches the shell.
  fakeBin = tempDir("agentbox-md-bin-");
  // the server runs under its tenant's uid: it must reach the stand-in and append to its log
  fs.chmodSync(fakeBin, 0o755);
  fs.writeFileSync(path.join(fakeBin, "calls.log"), "", { mode: 0o666 });
  fs.chmodSync(path.join(fakeBin, "calls.log"), 0o666);
  fs.writeFileSync(
    path.join(fakeBin, "exiftool"),
    `#!/bin/sh\nprintf '%s\\n' "$@" >> "${fakeBin}/calls.log"\necho '[{"ImageSize":"1x1","Title":"Fake Exif Title"}]'\n`,
    { mode: 0o755 },
  );

  server = http.createServer((req, res) => {
    const url = req.url ?? "/";
    if (url === "/doc") return void res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(HTML);
    if (url === "/download") {
      return void res.writeHead(200, { "content-type": "application/octet-stream", "content-disposition": 'attachment; filename="t.csv"' }).end(CSV);
    }
    if (url === "/huge.txt") return void res.writeHead(200, { "content-type": "text/plain" }).end("x".repeat(MAX_BYTES + 10));
    if (url === "/slow.txt") return; // never answers: the fetch must time out
    res.writeHead(404, { "content-type": "text/plain" }).end("nope");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  hub = await startHub({
    servers: ["markitdown"],
    workspace: ws,
    env: { MARKITDOWN_MAX_BYTES: String(MAX_BYTES), MARKITDOWN_TIMEOUT_MS: "1500", PATH: `${fakeBin}:${process.env.PATH}` },
  });
  client = await hub.connect();
});

after(async () => {
  await hub?.stop();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  fs.rmSync(ws, { recursive: true, force: true });
  fs.rmSync(fakeBin, { recursive: true, force: true });
});

describe("formats", () => {
  test("lists the formats with extensions", async () => {
    const result = await call(client, "markitdown_formats");
    const ids = (structured(result).formats as { id: string }[]).map((f) => f.id);
    for (const id of ["pdf", "docx", "xlsx", "html", "csv", "json", "zip", "ipynb", "feed"]) assert.ok(ids.includes(id), id);
    assert.match(textOf(result), /\.docx/);
  });
});

describe("conversions", () => {
  test("PDF text", async () => {
    const { text, data } = await ok({ source: "paper.pdf" });
    assert.match(text, /Hello from the PDF fixture/);
    assert.match(text, /Second line of text/);
    assert.equal(data.format, "pdf");
  });

  test("DOCX heading and bold text", async () => {
    const { text } = await ok({ source: "report.docx" });
    assert.match(text, /^# Quarterly Report/m);
    assert.match(text, /Revenue grew \*\*twelve percent\*\*/);
  });

  test("XLSX sheets as tables", async () => {
    const { text } = await ok({ source: "stock.xlsx" });
    assert.match(text, /## Stock/);
    assert.match(text, /\| apple \| 3 +\|/);
    assert.match(text, /## Places[\s\S]*Lyon/);
  });

  test("HTML with title, no scripts", async () => {
    const { text, data } = await ok({ source: "page.html" });
    assert.equal(data.title, "Fixture Page");
    assert.match(text, /^# Main heading/m);
    assert.match(text, /\[link\]\(https:\/\/example\.test\/x/);
    assert.doesNotMatch(text, /should not appear/);
  });

  test("CSV as a Markdown table", async () => {
    const { text } = await ok({ source: "table.csv" });
    assert.match(text, /^\| name \| note \| count \|$/m);
    assert.match(text, /^\| --- \| --- \| --- \|$/m);
    assert.match(text, /^\| alpha \| has, comma \| 1 \|$/m);
    assert.match(text, /^\| beta \| pipe \\\| inside \| 2 \|$/m);
  });

  test("JSON pretty-printed in a fenced block", async () => {
    const { text } = await ok({ source: "config.json" });
    assert.match(text, /^```json\n\{\n {2}"name": "agentbox",/m);
    assert.match(text, /"ok": true/);
    assert.match(text, /\n```/);
  });

  test("ZIP: every supported entry converted, others listed as skipped", async () => {
    const { text, data } = await ok({ source: "bundle.zip" });
    assert.equal(data.format, "zip");
    assert.match(text, /## page\.html[\s\S]*# Main heading/);
    assert.match(text, /## data\/table\.csv[\s\S]*\| alpha \| has, comma \| 1 \|/);
    assert.match(text, /## data\/config\.json[\s\S]*"agentbox"/);
    assert.match(text, /## report\.docx[\s\S]*# Quarterly Report/);
    assert.match(text, /Skipped[\s\S]*blob\.bin/);
  });

  test("image metadata: exiftool only ever sees our temp name, never the user's", async () => {
    const hostile = 'x"; touch pwned; echo ".png';
    const png = new PNG({ width: 1, height: 1 });
    fs.writeFileSync(path.join(ws, hostile), PNG.sync.write(png));
    const { text } = await ok({ source: hostile });
    assert.match(text, /ImageSize: 1x1/);
    assert.ok(!fs.existsSync(path.join(ws, "pwned")) && !fs.existsSync("pwned"));
    const calls = fs.readFileSync(path.join(fakeBin, "calls.log"), "utf8");
    assert.match(calls, /agentbox-md-[^/]+\/input\.png/);
    assert.doesNotMatch(calls, /pwned/);
  });
});

describe("sources", () => {
  test("file: URI inside the workspace", async () => {
    const { text } = await ok({ source: `file://${path.join(ws, "page.html")}` });
    assert.match(text, /# Main heading/);
  });

  test("http URL: format from the Content-Type when the path has no extension", async () => {
    const { text, data } = await ok({ source: `${base}/doc` });
    assert.equal(data.title, "Fixture Page");
    assert.match(text, /# Main heading/);
  });

  test("http URL: format from the Content-Disposition file name", async () => {
    const { text } = await ok({ source: `${base}/download` });
    assert.match(text, /\| alpha \| has, comma \| 1 \|/);
  });

  test("data: URIs, base64 and percent-encoded", async () => {
    const b64 = await ok({ source: `data:text/csv;base64,${Buffer.from(CSV).toString("base64")}` });
    assert.match(b64.text, /\| name \| note \| count \|/);
    const plain = await ok({ source: `data:application/json,${encodeURIComponent('{"a":[1,2]}')}` });
    assert.match(plain.text, /```json[\s\S]*"a": \[/);
  });

  test("inline base64 content with a file name", async () => {
    const { text } = await ok({ content: (await makeDocx()).toString("base64"), name: "inline.docx" });
    assert.match(text, /# Quarterly Report/);
  });

  test("format override for a name without a known extension", async () => {
    const { text } = await ok({ source: "notes.xyz", format: "txt" });
    assert.match(text, /what is this/);
  });
});

describe("paging and saving", () => {
  test("pages cover the whole text and say what remains", async () => {
    const whole = fs.readFileSync(path.join(ws, "long.txt"), "utf8");
    let offset = 0;
    let collected = "";
    for (let i = 0; i < 10 && offset !== null; i++) {
      const result = await convert({ source: "long.txt", offset, limit: 1000 });
      const data = structured(result);
      assert.equal(data.totalChars, whole.length);
      collected += whole.slice(data.offset as number, data.end as number);
      if (data.nextOffset !== null) {
        assert.equal(data.remaining, whole.length - (data.end as number));
        assert.match(textOf(result), new RegExp(`call markitdown_convert with offset=${data.nextOffset}`));
      }
      offset = data.nextOffset as number;
    }
    assert.equal(collected, whole);
    const first = await ok({ source: "long.txt", limit: 1000 });
    assert.ok(first.text.startsWith(whole.slice(0, 1000)));
  });

  test("saveTo writes the whole Markdown and refuses to overwrite unless asked", async () => {
    const { data } = await ok({ source: "report.docx", saveTo: "out/report.md" });
    assert.equal(data.savedTo, path.join("out", "report.md"));
    assert.match(fs.readFileSync(path.join(ws, "out", "report.md"), "utf8"), /# Quarterly Report/);
    assert.match(await failure({ source: "page.html", saveTo: "out/report.md" }), /already exists/);
    await ok({ source: "page.html", saveTo: "out/report.md", overwrite: true });
    assert.match(fs.readFileSync(path.join(ws, "out", "report.md"), "utf8"), /# Main heading/);
  });
});

describe("errors", () => {
  test("missing file, folder, unknown format name", async () => {
    assert.match(await failure({ source: "nope.pdf" }), /No such file/);
    assert.match(await failure({ source: "sub" }), /not a regular file/);
    assert.match(await failure({ source: "page.html", format: "hologram" }), /Unknown format 'hologram'\. Supported: PDF/);
  });

  test("unsupported format lists the supported ones", async () => {
    const message = await failure({ source: "notes.xyz" });
    assert.match(message, /'\.xyz' is not a supported format/);
    assert.match(message, /PDF \(\.pdf\)/);
    assert.match(message, /CSV \(\.csv\)/);
  });

  test("damaged documents give a clear message", async () => {
    assert.match(await failure({ source: "broken.json" }), /Not valid JSON/);
    assert.match(await failure({ content: Buffer.from("not a pdf").toString("base64"), name: "x.pdf" }), /Could not read this PDF/);
  });

  test("paths outside the workspace are refused", async () => {
    assert.match(await failure({ source: "../../etc/hostname.txt" }), /outside the workspace/);
    assert.match(await failure({ source: "/etc/hostname" }), /outside the workspace/);
    assert.match(await failure({ source: "file:///etc/hostname" }), /outside the workspace/);
    assert.match(await failure({ source: "sub/escape.txt" }), /outside the workspace/);
    assert.match(await failure({ source: "page.html", saveTo: "../escaped.md" }), /outside the workspace/);
  });

  test("bad sources: unknown scheme, HTTP error, size cap, timeout, missing name", async () => {
    assert.match(await failure({ source: "ftp://127.0.0.1/x.pdf" }), /Unsupported source scheme/);
    assert.match(await failure({ source: `${base}/missing.html` }), /HTTP 404/);
    assert.match(await failure({ source: `${base}/huge.txt` }), /limit/);
    assert.match(await failure({ source: `${base}/slow.txt` }), /Timed out/);
    assert.match(await failure({ content: "aGVsbG8=" }), /needs a `name`/);
  });
});
