// Every path stays inside the workspace: traversal, absolute paths, prefix tricks, NUL bytes,
// symlinks pointing out, agentbox's private folder; and the read-only mode.
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { tempDir, textOf } from "../helpers/hub.js";
import { startFiles, type FileHarness } from "./harness.js";

let f: FileHarness;
let outside: string;
let evil: string;
before(async () => {
  f = await startFiles();
  outside = tempDir("agentbox-outside-");
  fs.writeFileSync(path.join(outside, "secret.txt"), "TOP SECRET\n");
  // a sibling whose name starts with the workspace's name: a prefix check without a separator lets it in
  evil = `${f.workspace}-evil`;
  fs.mkdirSync(evil);
  fs.writeFileSync(path.join(evil, "secret.txt"), "EVIL SECRET\n");
  f.put("inside.txt", "fine\n");
  fs.symlinkSync(path.join(outside, "secret.txt"), path.join(f.workspace, "out-link"));
  fs.symlinkSync(outside, path.join(f.workspace, "out-dir"));
  fs.symlinkSync("inside.txt", path.join(f.workspace, "in-link"));
});
after(async () => {
  await f?.stop();
  fs.rmSync(outside, { recursive: true, force: true });
  fs.rmSync(evil, { recursive: true, force: true });
});

async function refused(tool: string, args: Record<string, unknown>, why: RegExp): Promise<void> {
  const r = await f.tool(tool, args);
  assert.equal(r.isError, true, `${tool} ${JSON.stringify(args)} should be refused, got: ${textOf(r)}`);
  assert.match(textOf(r), why);
  assert.doesNotMatch(textOf(r), /SECRET/);
}

const OUTSIDE = /outside the workspace/;

describe("confinement", () => {
  test("traversal and absolute paths outside are refused", async () => {
    await refused("read", { path: "../secret.txt" }, OUTSIDE);
    await refused("read", { path: "a/../../../etc/passwd" }, OUTSIDE);
    await refused("read", { path: path.join(outside, "secret.txt") }, OUTSIDE);
    await refused("read", { path: "/etc/passwd" }, OUTSIDE);
    await refused("read", { path: "file:///etc/passwd" }, OUTSIDE);
    await refused("list", { path: ".." }, OUTSIDE);
    await refused("write", { path: "../planted.txt", content: "x" }, OUTSIDE);
    await refused("mkdir", { path: "../planted-dir" }, OUTSIDE);
    await refused("move", { source: "inside.txt", destination: "../moved.txt" }, OUTSIDE);
    await refused("copy", { source: "inside.txt", destination: path.join(outside, "copied.txt") }, OUTSIDE);
    await refused("delete", { path: path.join(outside, "secret.txt") }, OUTSIDE);
    assert.ok(!fs.existsSync(path.join(path.dirname(f.workspace), "planted.txt")));
    assert.ok(!fs.existsSync(path.join(path.dirname(f.workspace), "planted-dir")));
    assert.ok(fs.existsSync(path.join(outside, "secret.txt")));
  });

  test("a sibling sharing the workspace's name as prefix is outside", async () => {
    await refused("read", { path: path.join(evil, "secret.txt") }, OUTSIDE);
    await refused("read", { path: `../${path.basename(evil)}/secret.txt` }, OUTSIDE);
    await refused("write", { path: path.join(evil, "new.txt"), content: "x" }, OUTSIDE);
    assert.ok(!fs.existsSync(path.join(evil, "new.txt")));
  });

  test("NUL bytes are refused", async () => {
    await refused("read", { path: "inside.txt\0.png" }, /NUL byte/);
    await refused("write", { path: "a\0b", content: "x" }, /NUL byte/);
    await refused("delete", { path: "inside.txt\0" }, /NUL byte/);
  });

  test("symlinks pointing out are not followed, for reading or writing", async () => {
    await refused("read", { path: "out-link" }, /outside the workspace/);
    await refused("read", { path: "out-dir/secret.txt" }, /outside the workspace/);
    await refused("list", { path: "out-dir" }, /outside the workspace/);
    await refused("write", { path: "out-link", content: "overwritten" }, /symlink pointing outside/);
    await refused("write", { path: "out-link", content: "more", append: true }, /symlink pointing outside/);
    await refused("write", { path: "out-dir/planted.txt", content: "x" }, /outside the workspace/);
    await refused("edit", { path: "out-link", edits: [{ oldText: "TOP", newText: "NOT" }] }, /outside the workspace/);
    await refused("copy", { source: "out-link", destination: "stolen.txt" }, /outside the workspace/);
    await refused("copy", { source: "inside.txt", destination: "out-dir/copied.txt" }, /outside the workspace/);
    await refused("move", { source: "inside.txt", destination: "out-dir/moved.txt" }, /outside the workspace/);
    assert.equal(fs.readFileSync(path.join(outside, "secret.txt"), "utf8"), "TOP SECRET\n");
    assert.deepEqual(fs.readdirSync(outside), ["secret.txt"]);
    assert.ok(!fs.existsSync(path.join(f.workspace, "stolen.txt")));
  });

  test("searches do not wander out through a symlinked folder", async () => {
    const grep = await f.tool("grep", { pattern: "SECRET" });
    assert.equal(grep.isError, undefined);
    assert.match(textOf(grep), /No matches/);
    const find = await f.tool("find", { pattern: "secret.txt" });
    assert.match(textOf(find), /No names match/);
  });

  test("a symlink inside the workspace works, and deleting a link pointing out removes only the link", async () => {
    assert.equal(textOf(await f.tool("read", { path: "in-link" })), "fine\n");
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(f.workspace, "doomed-link"));
    const r = await f.tool("delete", { path: "doomed-link" });
    assert.equal(r.isError, undefined, textOf(r));
    assert.ok(!fs.existsSync(path.join(f.workspace, "doomed-link")));
    assert.equal(fs.readFileSync(path.join(outside, "secret.txt"), "utf8"), "TOP SECRET\n");
  });

  test("agentbox's .agentbox folder is off limits and out of sight", async () => {
    await f.tool("snapshot_take", { name: "hidden" });
    await refused("read", { path: ".agentbox/snapshots/hidden/meta.json" }, /\.agentbox.*the snapshot tools/);
    await refused("write", { path: ".agentbox/snapshots/x.txt", content: "x" }, /\.agentbox/);
    await refused("delete", { path: ".agentbox", recursive: true }, /\.agentbox/);
    await refused("list", { path: ".agentbox" }, /\.agentbox/);
    const list = await f.tool("list", { hidden: true });
    assert.doesNotMatch(textOf(list), /\.agentbox/);
    const tree = await f.tool("tree", { hidden: true, exclude: [] });
    assert.doesNotMatch(textOf(tree), /agentbox|meta\.json/);
    const grep = await f.tool("grep", { pattern: "createdAt", hidden: true, exclude: [] });
    assert.match(textOf(grep), /No matches/);
  });
});

describe("read-only mode", () => {
  let ro: FileHarness;
  before(async () => {
    ro = await startFiles({ AGENTBOX_FILE_READONLY: "1" });
    ro.put("doc.txt", "original\n");
  });
  after(async () => {
    await ro?.stop();
  });

  test("reading works, every write is refused with the reason", async () => {
    assert.equal(textOf(await ro.tool("read", { path: "doc.txt" })), "original\n");
    const dry = await ro.tool("edit", { path: "doc.txt", dryRun: true, edits: [{ oldText: "original", newText: "changed" }] });
    assert.equal(dry.isError, undefined, "a dry run changes nothing, so it is allowed");
    const attempts: [string, Record<string, unknown>][] = [
      ["write", { path: "doc.txt", content: "x" }],
      ["edit", { path: "doc.txt", edits: [{ oldText: "original", newText: "changed" }] }],
      ["mkdir", { path: "d" }],
      ["copy", { source: "doc.txt", destination: "c.txt" }],
      ["move", { source: "doc.txt", destination: "m.txt" }],
      ["delete", { path: "doc.txt" }],
      ["snapshot_take", { name: "s" }],
      ["snapshot_restore", { name: "s" }],
      ["snapshot_delete", { name: "s" }],
    ];
    for (const [tool, args] of attempts) {
      const r = await ro.tool(tool, args);
      assert.equal(r.isError, true, tool);
      assert.match(textOf(r), new RegExp(`read-only mode \\(AGENTBOX_FILE_READONLY=1\\): file_${tool} is refused`));
    }
    assert.deepEqual(fs.readdirSync(ro.workspace), ["doc.txt"]);
    assert.equal(fs.readFileSync(path.join(ro.workspace, "doc.txt"), "utf8"), "original\n");
  });
});
