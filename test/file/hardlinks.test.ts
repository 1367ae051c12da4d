// A hard link made by a command (`ln /etc/shadow x`, or a file of another tenant) is one file with
// two names, so no path check can tell it comes from outside: every read path refuses regular
// files with more than one link, and says how to get an own file back (copy it with a command).
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { tempDir, textOf } from "../helpers/hub.js";
import { startFiles, type FileHarness } from "./harness.js";

const SECRET = "TOP SECRET";
let f: FileHarness;
let outside: string;

before(async () => {
  f = await startFiles();
  // same filesystem as the workspace (both under the temp folder), as a link requires
  outside = tempDir("agentbox-hl-outside-");
  fs.writeFileSync(path.join(outside, "secret.txt"), `${SECRET}\n`);
  fs.mkdirSync(path.join(f.workspace, "sub"));
  fs.linkSync(path.join(outside, "secret.txt"), path.join(f.workspace, "hl.txt"));
  fs.linkSync(path.join(outside, "secret.txt"), path.join(f.workspace, "sub", "hl.txt"));
  f.put("plain.txt", "plain\n");
});
after(async () => {
  await f?.stop();
  fs.rmSync(outside, { recursive: true, force: true });
});

const HARD_LINK = /hard link .*refusing to read it.*copy it into a normal file with a command/;

async function refused(tool: string, args: Record<string, unknown>): Promise<void> {
  const r = await f.tool(tool, args);
  assert.equal(r.isError, true, `${tool} should refuse a hard link, got: ${textOf(r)}`);
  assert.match(textOf(r), HARD_LINK);
  assert.doesNotMatch(JSON.stringify(r), new RegExp(SECRET));
}

describe("hard links", () => {
  test("read, edit, copy and append refuse a hard-linked file, saying why and what to do", async () => {
    await refused("read", { path: "hl.txt" });
    await refused("read", { path: "hl.txt", encoding: "base64" });
    await refused("edit", { path: "hl.txt", edits: [{ oldText: "TOP", newText: "NOT" }] });
    await refused("edit", { path: "hl.txt", dryRun: true, edits: [{ oldText: "TOP", newText: "NOT" }] });
    await refused("copy", { source: "hl.txt", destination: "stolen.txt" });
    await refused("write", { path: "hl.txt", content: "more", append: true });
    assert.ok(!fs.existsSync(path.join(f.workspace, "stolen.txt")));
    assert.equal(fs.readFileSync(path.join(outside, "secret.txt"), "utf8"), `${SECRET}\n`);
  });

  test("read_many reports it in place; grep skips it; info does not read it", async () => {
    const many = await f.tool("read_many", { paths: ["hl.txt", "plain.txt"] });
    assert.equal(many.isError, undefined);
    assert.match(textOf(many), HARD_LINK);
    assert.match(textOf(many), /plain/);
    assert.doesNotMatch(textOf(many), new RegExp(SECRET));
    const grep = await f.tool("grep", { pattern: "SECRET" });
    assert.match(textOf(grep), /No matches/);
    const info = await f.tool("info", { path: "hl.txt" });
    assert.equal(info.isError, undefined, textOf(info));
    assert.match(textOf(info), /hard link \(3 names/);
    assert.equal((info.structuredContent as { kind?: string }).kind, undefined);
  });

  test("copying a folder or taking a snapshot leaves hard links out and says so", async () => {
    const copy = await f.tool("copy", { source: "sub", destination: "sub-copy" });
    assert.equal(copy.isError, undefined, textOf(copy));
    assert.match(textOf(copy), /Not copied.*hl\.txt \(hard link\)/);
    assert.deepEqual(fs.readdirSync(path.join(f.workspace, "sub-copy")), []);
    const snap = await f.tool("snapshot_take", { name: "with-links" });
    assert.equal(snap.isError, undefined, textOf(snap));
    assert.deepEqual((snap.structuredContent as { skipped: string[] }).skipped.sort(), ["hl.txt (hard link)", "sub/hl.txt (hard link)"]);
  });

  test("resources/read refuses it", async () => {
    await assert.rejects(f.client.readResource({ uri: "file:///hl.txt" }), HARD_LINK);
  });

  test("writing over a hard link replaces this name only; the other file is untouched", async () => {
    const r = await f.tool("write", { path: "hl.txt", content: "mine now\n" });
    assert.equal(r.isError, undefined, textOf(r));
    assert.equal(fs.readFileSync(path.join(outside, "secret.txt"), "utf8"), `${SECRET}\n`);
    assert.equal(textOf(await f.tool("read", { path: "hl.txt" })), "mine now\n");
  });

  test("a folder's link count (its subfolders) is no reason to refuse it", async () => {
    f.put("parent/a/x.txt", "x\n");
    f.put("parent/b/y.txt", "y\n");
    assert.ok(fs.statSync(path.join(f.workspace, "parent")).nlink > 1);
    const copy = await f.tool("copy", { source: "parent", destination: "parent-copy" });
    assert.equal(copy.isError, undefined, textOf(copy));
    assert.equal(fs.readFileSync(path.join(f.workspace, "parent-copy/b/y.txt"), "utf8"), "y\n");
  });
});
