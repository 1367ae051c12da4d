// list, tree, find, grep, move, copy, delete, mkdir and info through the hub.
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { textOf } from "../helpers/hub.js";
import { startFiles, structured, type FileHarness } from "./harness.js";

let f: FileHarness;
before(async () => {
  f = await startFiles();
  f.put("src/app.ts", "export const answer = 42;\n// TODO: more\n");
  f.put("src/util/strings.ts", "export function shout(s: string) {\n  return s.toUpperCase();\n}\n// todo later\n");
  f.put("src/util/big.json", JSON.stringify({ data: "x".repeat(5000) }));
  f.put("README.md", "# Project\n\nTODO: write docs\n");
  f.put(".env", "SECRET=1\n");
  f.put("node_modules/pkg/index.js", "// TODO in a dependency\n");
  fs.mkdirSync(path.join(f.workspace, "empty"));
});
after(async () => {
  await f?.stop();
});

const names = (entries: { name?: string; path?: string }[]) => entries.map((e) => e.name ?? e.path);

describe("list", () => {
  test("lists entries with types and sizes, hidden only when asked, sorted", async () => {
    const r = structured(await f.tool("list", {}));
    assert.deepEqual(names(r.entries), ["README.md", "empty", "node_modules", "src"]);
    const readme = r.entries.find((e: { name: string }) => e.name === "README.md");
    assert.equal(readme.type, "file");
    assert.equal(readme.size, fs.statSync(path.join(f.workspace, "README.md")).size);

    const hidden = structured(await f.tool("list", { hidden: true }));
    assert.ok(names(hidden.entries).includes(".env"));

    const bySize = structured(await f.tool("list", { path: "src/util", sort: "size", reverse: true }));
    assert.deepEqual(names(bySize.entries), ["big.json", "strings.ts"]);
    const dirsFirst = structured(await f.tool("list", { sort: "type" }));
    assert.deepEqual(names(dirsFirst.entries).slice(0, 3), ["empty", "node_modules", "src"]);
  });

  test("refuses a file or a missing folder", async () => {
    const file = await f.tool("list", { path: "README.md" });
    assert.equal(file.isError, true);
    assert.match(textOf(file), /not a folder/);
    const missing = await f.tool("list", { path: "nowhere" });
    assert.equal(missing.isError, true);
    assert.match(textOf(missing), /No such file or directory/);
  });
});

describe("tree", () => {
  test("shows nesting to a depth, skipping excluded names", async () => {
    const r = await f.tool("tree", {});
    const paths = names(structured(r).entries);
    assert.ok(paths.includes("src/util/strings.ts"));
    assert.ok(!paths.some((p) => p!.startsWith("node_modules")), "node_modules excluded by default");
    assert.match(textOf(r), /^\.\/\nREADME\.md\nempty\/\nsrc\/\n  app\.ts\n  util\/\n    big\.json/);

    const shallow = names(structured(await f.tool("tree", { depth: 1 })).entries);
    assert.deepEqual(shallow, ["README.md", "empty", "src"]);

    const custom = names(structured(await f.tool("tree", { exclude: ["*.json"] })).entries);
    assert.ok(custom.includes("node_modules/pkg/index.js"));
    assert.ok(!custom.includes("src/util/big.json"));
  });
});

describe("find", () => {
  test("matches names by glob, or relative paths when the glob has a slash", async () => {
    const ts = structured(await f.tool("find", { pattern: "*.ts" })).matches;
    assert.deepEqual(names(ts), ["src/app.ts", "src/util/strings.ts"]);
    const under = structured(await f.tool("find", { pattern: "util/*", path: "src" })).matches;
    assert.deepEqual(names(under), ["src/util/big.json", "src/util/strings.ts"]);
    const dirs = structured(await f.tool("find", { pattern: "*", type: "directory" })).matches;
    assert.deepEqual(names(dirs), ["empty", "src", "src/util"]);
    const none = await f.tool("find", { pattern: "*.rs" });
    assert.match(textOf(none), /No names match/);
  });
});

describe("grep", () => {
  test("finds regex matches with context, skipping node_modules by default", async () => {
    const r = await f.tool("grep", { pattern: "todo", ignoreCase: true, context: 1 });
    const s = structured(r);
    assert.deepEqual(
      s.matches.map((m: { path: string; line: number }) => `${m.path}:${m.line}`),
      ["README.md:3", "src/app.ts:2", "src/util/strings.ts:4"],
    );
    assert.deepEqual(s.matches[1].before, ["export const answer = 42;"]);
    assert.match(textOf(r), /src\/app\.ts-1-export const answer = 42;\nsrc\/app\.ts:2:\/\/ TODO: more/);
  });

  test("caps results, filters by include, and refuses a bad regex", async () => {
    const capped = structured(await f.tool("grep", { pattern: "o", limit: 2 }));
    assert.equal(capped.matches.length, 2);
    assert.equal(capped.nextOffset, 2);
    const onlyMd = structured(await f.tool("grep", { pattern: "TODO", include: "*.md" }));
    assert.deepEqual(names(onlyMd.matches), ["README.md"]);
    const literal = structured(await f.tool("grep", { pattern: "s.toUpperCase()", literal: true }));
    assert.deepEqual(names(literal.matches), ["src/util/strings.ts"]);
    const bad = await f.tool("grep", { pattern: "(unclosed" });
    assert.equal(bad.isError, true);
    assert.match(textOf(bad), /Invalid regular expression/);
  });
});

describe("move, copy, delete, mkdir, info", () => {
  test("mkdir creates parents and accepts an existing folder; refuses a file", async () => {
    const r = await f.tool("mkdir", { path: "a/b/c" });
    assert.equal(structured(r).created, true);
    assert.ok(fs.statSync(path.join(f.workspace, "a/b/c")).isDirectory());
    assert.equal(structured(await f.tool("mkdir", { path: "a/b/c" })).created, false);
    const onFile = await f.tool("mkdir", { path: "README.md" });
    assert.equal(onFile.isError, true);
    assert.match(textOf(onFile), /not a folder/);
    const noParents = await f.tool("mkdir", { path: "x/y/z", parents: false });
    assert.equal(noParents.isError, true);
  });

  test("copy copies files and folders, refusing to overwrite unless asked", async () => {
    await f.tool("copy", { source: "src", destination: "backup/src" });
    assert.equal(
      fs.readFileSync(path.join(f.workspace, "backup/src/util/strings.ts"), "utf8"),
      fs.readFileSync(path.join(f.workspace, "src/util/strings.ts"), "utf8"),
    );
    const exists = await f.tool("copy", { source: "README.md", destination: "src/app.ts" });
    assert.equal(exists.isError, true);
    assert.match(textOf(exists), /already exists; pass overwrite: true/);
    await f.tool("copy", { source: "README.md", destination: "backup/README.md" });
    const over = await f.tool("copy", { source: "src/app.ts", destination: "backup/README.md", overwrite: true });
    assert.equal(over.isError, undefined);
    assert.match(fs.readFileSync(path.join(f.workspace, "backup/README.md"), "utf8"), /answer = 42/);
    const into = await f.tool("copy", { source: "src", destination: "src/util/again" });
    assert.equal(into.isError, true);
    assert.match(textOf(into), /inside the folder being moved or copied/);
  });

  test("move renames and creates parents; refuses an existing destination", async () => {
    f.put("mv/one.txt", "1");
    await f.tool("move", { source: "mv/one.txt", destination: "mv/sub/two.txt" });
    assert.ok(!fs.existsSync(path.join(f.workspace, "mv/one.txt")));
    assert.equal(fs.readFileSync(path.join(f.workspace, "mv/sub/two.txt"), "utf8"), "1");
    f.put("mv/three.txt", "3");
    const clash = await f.tool("move", { source: "mv/three.txt", destination: "mv/sub/two.txt" });
    assert.equal(clash.isError, true);
    const onDir = await f.tool("move", { source: "mv/three.txt", destination: "mv/sub" });
    assert.equal(onDir.isError, true);
    assert.match(textOf(onDir), /existing folder; give the full new path, e\.g\. 'mv\/sub\/three\.txt'/);
    const missing = await f.tool("move", { source: "mv/ghost.txt", destination: "mv/x.txt" });
    assert.equal(missing.isError, true);
    assert.match(textOf(missing), /No such file or directory/);
  });

  test("delete removes files and empty folders, folders with content only when recursive", async () => {
    f.put("del/keep/file.txt", "x");
    f.put("del/file.txt", "x");
    fs.mkdirSync(path.join(f.workspace, "del/hollow"));
    await f.tool("delete", { path: "del/file.txt" });
    assert.ok(!fs.existsSync(path.join(f.workspace, "del/file.txt")));
    await f.tool("delete", { path: "del/hollow" });
    assert.ok(!fs.existsSync(path.join(f.workspace, "del/hollow")));
    const full = await f.tool("delete", { path: "del" });
    assert.equal(full.isError, true);
    assert.match(textOf(full), /not empty .*recursive: true/);
    assert.ok(fs.existsSync(path.join(f.workspace, "del/keep/file.txt")));
    await f.tool("delete", { path: "del", recursive: true });
    assert.ok(!fs.existsSync(path.join(f.workspace, "del")));
    const root = await f.tool("delete", { path: ".", recursive: true });
    assert.equal(root.isError, true);
    assert.match(textOf(root), /workspace root/);
    assert.ok(fs.existsSync(path.join(f.workspace, "README.md")));
  });

  test("info describes files, folders and symlinks", async () => {
    const p = f.put("info/run.sh", "#!/bin/sh\n", 0o750);
    const file = structured(await f.tool("info", { path: "info/run.sh" }));
    assert.equal(file.type, "file");
    assert.equal(file.mode, "750");
    assert.equal(file.size, 10);
    assert.equal(file.kind, "text");
    fs.symlinkSync("run.sh", path.join(path.dirname(p), "link"));
    const link = structured(await f.tool("info", { path: "info/link" }));
    assert.equal(link.type, "symlink");
    assert.equal(link.target, "info/run.sh");
    assert.equal(structured(await f.tool("info", { path: "info" })).type, "directory");
    const missing = await f.tool("info", { path: "info/none" });
    assert.equal(missing.isError, true);
  });
});
