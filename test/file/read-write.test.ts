// read, read_many, write and edit through the hub: success and failure paths.
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { PNG } from "pngjs";
import { textOf } from "../helpers/hub.js";
import { startFiles, structured, type FileHarness } from "./harness.js";

let f: FileHarness;
before(async () => {
  f = await startFiles();
});
after(async () => {
  await f?.stop();
});

function tinyPng(): Buffer {
  const png = new PNG({ width: 2, height: 2 });
  png.data.fill(200);
  return PNG.sync.write(png);
}

describe("read", () => {
  test("reads a whole text file and a line range with numbers", async () => {
    f.put("notes/a.txt", "one\ntwo\nthree\nfour\nfive\n");
    const whole = await f.tool("read", { path: "notes/a.txt" });
    assert.equal(whole.isError, undefined);
    assert.equal(textOf(whole), "one\ntwo\nthree\nfour\nfive\n");
    assert.equal(structured(whole).totalLines, 5);

    // offset is the 0-based index of the first line: line 2 is offset 1
    const range = await f.tool("read", { path: "notes/a.txt", offset: 1, limit: 2, lineNumbers: true });
    assert.match(textOf(range), /^2\ttwo\n3\tthree\n/);
    assert.match(textOf(range), /call file_read with offset=3/);
    const s = structured(range);
    assert.equal(s.startLine, 2);
    assert.equal(s.endLine, 3);
    assert.equal(s.offset, 1);
    assert.equal(s.nextOffset, 3);
  });

  test("pages a large file instead of dumping it", async () => {
    const line = "x".repeat(99);
    f.put("big.txt", Array.from({ length: 10_000 }, (_, i) => `${i + 1} ${line}`).join("\n"));
    const first = structured(await f.tool("read", { path: "big.txt" }));
    assert.equal(typeof first.nextOffset, "number");
    assert.ok(first.endLine < 10_000);
    assert.ok(first.text.length <= 256 * 1024);
    const next = structured(await f.tool("read", { path: "big.txt", offset: first.nextOffset }));
    // line n (from 1) starts with "n ": the next page starts at the line after the first page's last
    assert.ok(next.text.startsWith(`${first.endLine + 1} `));
    assert.equal(next.offset, first.nextOffset);
  });

  test("small files (read whole) and large ones (streamed) split lines alike: CRLF, lone CR, final newline", async () => {
    const head = "a\r\nb\rc\n\nd";
    f.put("breaks-small.txt", head + "\n");
    f.put("breaks-none.txt", "a\r\nb");
    f.put("breaks-large.txt", head + "\n" + ("z".repeat(100) + "\n").repeat(11_000));
    assert.ok(fs.statSync(path.join(f.workspace, "breaks-large.txt")).size > 1024 * 1024);
    const small = structured(await f.tool("read", { path: "breaks-small.txt" }));
    assert.equal(small.text, "a\nb\nc\n\nd\n");
    assert.equal(small.totalLines, 5);
    assert.equal(small.nextOffset, null);
    const none = structured(await f.tool("read", { path: "breaks-none.txt" }));
    assert.equal(none.text, "a\nb");
    assert.equal(none.totalLines, 2);
    const large = structured(await f.tool("read", { path: "breaks-large.txt", limit: 5 }));
    assert.equal(large.text, "a\nb\nc\n\nd");
    assert.equal(large.nextOffset, 5);
    const smallPaged = structured(await f.tool("read", { path: "breaks-small.txt", offset: 2, limit: 2 }));
    const largePaged = structured(await f.tool("read", { path: "breaks-large.txt", offset: 2, limit: 2 }));
    assert.deepEqual([smallPaged.text, smallPaged.nextOffset], [largePaged.text, largePaged.nextOffset]);
  });

  test("returns an image as image content", async () => {
    f.put("img/dot.png", tinyPng());
    const r = await f.tool("read", { path: "img/dot.png" });
    const image = r.content.find((c) => c.type === "image");
    assert.ok(image && image.type === "image");
    assert.equal(image.mimeType, "image/png");
    assert.deepEqual(Buffer.from(image.data, "base64"), tinyPng());
  });

  test("describes a binary file, and gives its bytes only when asked, paged", async () => {
    const bytes = Buffer.from([0, 1, 2, 3, 255, 254, 0, 7]);
    f.put("blob.bin", bytes);
    const plain = await f.tool("read", { path: "blob.bin" });
    assert.equal(structured(plain).kind, "binary");
    assert.match(textOf(plain), /binary file.*encoding 'base64'/);
    assert.ok(!plain.content.some((c) => c.type === "resource"));

    const page = await f.tool("read", { path: "blob.bin", encoding: "base64", offset: 2, limit: 4 });
    const res = page.content.find((c) => c.type === "resource");
    assert.ok(res && res.type === "resource" && "blob" in res.resource);
    assert.deepEqual(Buffer.from(res.resource.blob as string, "base64"), bytes.subarray(2, 6));
    assert.equal(structured(page).nextOffset, 6);
  });

  test("failures say what was wrong", async () => {
    const missing = await f.tool("read", { path: "nope.txt" });
    assert.equal(missing.isError, true);
    assert.match(textOf(missing), /No such file or directory: nope\.txt/);
    const dir = await f.tool("read", { path: "notes" });
    assert.equal(dir.isError, true);
    assert.match(textOf(dir), /is a directory; use file_list or file_tree/);
    const negative = await f.tool("read", { path: "notes/a.txt", offset: -1 });
    assert.equal(negative.isError, true);
    assert.match(textOf(negative), /Invalid arguments for file_read:\n- offset: offset counts from 0/);
    const past = await f.tool("read", { path: "notes/a.txt", offset: 100 });
    assert.equal(past.isError, true);
    assert.match(textOf(past), /past the end/);
  });
});

describe("read_many", () => {
  test("reads several files and reports failures in place", async () => {
    f.put("m/1.txt", "first");
    f.put("m/2.txt", "second");
    const r = await f.tool("read_many", { paths: ["m/1.txt", "m/missing.txt", "m/2.txt", "blob.bin"] });
    assert.equal(r.isError, undefined);
    const files = structured(r).files;
    assert.deepEqual(
      files.map((x: { ok: boolean }) => x.ok),
      [true, false, true, false],
    );
    assert.equal(files[0].text, "first");
    assert.match(files[1].error, /No such file/);
    assert.match(files[3].error, /binary/);
    assert.match(textOf(r), /==> m\/2\.txt <==\nsecond/);
  });
});

describe("write", () => {
  test("creates parents, replaces, appends, writes base64", async () => {
    const created = await f.tool("write", { path: "deep/er/new.txt", content: "hello" });
    assert.equal(structured(created).created, true);
    assert.equal(fs.readFileSync(path.join(f.workspace, "deep/er/new.txt"), "utf8"), "hello");

    await f.tool("write", { path: "deep/er/new.txt", content: " world", append: true });
    assert.equal(fs.readFileSync(path.join(f.workspace, "deep/er/new.txt"), "utf8"), "hello world");

    const replaced = await f.tool("write", { path: "deep/er/new.txt", content: "bye" });
    assert.equal(structured(replaced).created, false);
    assert.equal(fs.readFileSync(path.join(f.workspace, "deep/er/new.txt"), "utf8"), "bye");

    const raw = Buffer.from([0, 159, 146, 150, 10]);
    await f.tool("write", { path: "raw.bin", content: raw.toString("base64"), encoding: "base64" });
    assert.deepEqual(fs.readFileSync(path.join(f.workspace, "raw.bin")), raw);
  });

  test("keeps an existing file's mode and leaves no temp files", async () => {
    const p = f.put("script.sh", "#!/bin/sh\necho 1\n", 0o751);
    await f.tool("write", { path: "script.sh", content: "#!/bin/sh\necho 2\n" });
    assert.equal(fs.statSync(p).mode & 0o777, 0o751);
    assert.deepEqual(
      fs.readdirSync(f.workspace).filter((n) => n.includes("agentbox-tmp")),
      [],
    );
  });

  test("refuses bad input with a reason", async () => {
    const dir = await f.tool("write", { path: "deep", content: "x" });
    assert.equal(dir.isError, true);
    assert.match(textOf(dir), /is a directory/);
    const b64 = await f.tool("write", { path: "x.bin", content: "not base64!", encoding: "base64" });
    assert.equal(b64.isError, true);
    assert.match(textOf(b64), /not valid base64/);
    const noParents = await f.tool("write", { path: "absent/dir/x.txt", content: "x", createParents: false });
    assert.equal(noParents.isError, true);
    assert.match(textOf(noParents), /Parent folder .* does not exist/);
  });

  test("reports progress on a large write when asked", async () => {
    const seen: number[] = [];
    const content = "z".repeat(3 * 1024 * 1024 + 10);
    const r = await f.client.callTool({ name: "file_write", arguments: { path: "progress.txt", content } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    assert.equal(r.isError, undefined);
    assert.deepEqual(seen, [1, 2, 3].map((n) => n * 1024 * 1024).concat(content.length));
  });

  test("a file being replaced is never seen half-written", async () => {
    // Two contents of different sizes written back and forth while the disk is polled: with an
    // in-place write a reader would see an empty or truncated file in between.
    const a = "A".repeat(3 * 1024 * 1024);
    const b = "B".repeat(1024 * 1024) + "\n";
    const p = f.put("swap.txt", a);
    let stop = false;
    const seen = new Set<string>();
    const watcher = (async () => {
      while (!stop) {
        const content = fs.readFileSync(p, "utf8");
        seen.add(content === a ? "a" : content === b ? "b" : `partial:${content.length}`);
        await new Promise((r) => setImmediate(r));
      }
    })();
    for (let i = 0; i < 6; i++) {
      const r = await f.tool("write", { path: "swap.txt", content: i % 2 ? a : b });
      assert.equal(r.isError, undefined);
    }
    stop = true;
    await watcher;
    assert.deepEqual(
      [...seen].filter((s) => s.startsWith("partial")),
      [],
    );
    assert.ok(seen.has("a") && seen.has("b"), `reader saw both versions: ${[...seen].join(",")}`);
  });
});

describe("edit", () => {
  const src = "function greet(name) {\n  return 'hi ' + name;\n}\n\nfunction bye() {\n  return 'bye';\n}\n";

  test("replaces exact text and returns a diff", async () => {
    const p = f.put("code/g.js", src);
    const r = await f.tool("edit", { path: "code/g.js", edits: [{ oldText: "'hi '", newText: "'hello '" }] });
    assert.equal(r.isError, undefined);
    assert.match(structured(r).diff, /-  return 'hi ' \+ name;\n\+  return 'hello ' \+ name;/);
    assert.equal(fs.readFileSync(p, "utf8"), src.replace("'hi '", "'hello '"));
  });

  test("dryRun shows the diff and leaves the file alone", async () => {
    const p = f.put("code/d.js", src);
    const r = await f.tool("edit", { path: "code/d.js", dryRun: true, edits: [{ oldText: "'bye'", newText: "'ciao'" }] });
    assert.match(textOf(r), /Dry run/);
    assert.match(structured(r).diff, /\+  return 'ciao';/);
    assert.equal(fs.readFileSync(p, "utf8"), src);
  });

  test("refuses an ambiguous match, naming the lines, and changes nothing", async () => {
    const p = f.put("code/amb.js", src);
    const r = await f.tool("edit", {
      path: "code/amb.js",
      edits: [
        { oldText: "greet", newText: "welcome" },
        { oldText: "return", newText: "yield" },
      ],
    });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /Edit #2: oldText matches 2 times, at lines 2, 6, but expectedCount is 1/);
    assert.equal(fs.readFileSync(p, "utf8"), src, "first edit not applied either");

    const all = await f.tool("edit", { path: "code/amb.js", edits: [{ oldText: "return", newText: "yield", expectedCount: 2 }] });
    assert.equal(all.isError, undefined);
    assert.equal(fs.readFileSync(p, "utf8"), src.replaceAll("return", "yield"));
  });

  test("falls back to a whitespace-tolerant match and keeps the file's indentation", async () => {
    const p = f.put("code/ws.py", "def f():\n        x = 1\n        y   =  2\n        return x + y\n");
    const r = await f.tool("edit", {
      path: "code/ws.py",
      edits: [{ oldText: "  x = 1\n  y = 2", newText: "  x = 10\n  y = 20" }],
    });
    assert.equal(r.isError, undefined, textOf(r));
    assert.equal(structured(r).applied[0].mode, "whitespace");
    assert.equal(fs.readFileSync(p, "utf8"), "def f():\n        x = 10\n        y = 20\n        return x + y\n");
  });

  test("says when the text is not there at all", async () => {
    f.put("code/n.js", src);
    const r = await f.tool("edit", { path: "code/n.js", edits: [{ oldText: "nonexistent()", newText: "x" }] });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /not found, not even with whitespace differences ignored/);
    const missing = await f.tool("edit", { path: "code/none.js", edits: [{ oldText: "a", newText: "b" }] });
    assert.equal(missing.isError, true);
    assert.match(textOf(missing), /No such file/);
  });
});
