// Snapshots bring the workspace back exactly: content, deleted and new files, empty folders,
// modes and symlinks.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { textOf } from "../helpers/hub.js";
import { startFiles, structured, type FileHarness } from "./harness.js";

let f: FileHarness;
before(async () => {
  f = await startFiles();
});
after(async () => {
  await f?.stop();
});

/** Everything that makes up the workspace's state, as one comparable list. */
function manifest(root: string): string[] {
  const out = [`. dir ${(fs.statSync(root).mode & 0o7777).toString(8)}`];
  const visit = (dir: string, prefix: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      if (!prefix && name === ".agentbox") continue;
      const p = path.join(dir, name);
      const rel = prefix ? `${prefix}/${name}` : name;
      const st = fs.lstatSync(p);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out.push(`${rel} link -> ${fs.readlinkSync(p)}`);
      else if (st.isDirectory()) {
        out.push(`${rel} dir ${mode}`);
        visit(p, rel);
      } else out.push(`${rel} file ${mode} ${crypto.createHash("sha256").update(fs.readFileSync(p)).digest("hex")}`);
    }
  };
  visit(root, "");
  return out;
}

describe("snapshots", () => {
  test("restore brings back content, deleted files, empty folders and modes, and removes new files", async () => {
    f.put("src/main.py", "print('v1')\n");
    f.put("src/lib/helper.py", "X = 1\n");
    f.put("run.sh", "#!/bin/sh\necho hi\n", 0o755);
    f.put("private.key", "k", 0o600);
    f.put(".hidden/config", "a=1\n");
    f.put("data.bin", crypto.randomBytes(70_000));
    fs.mkdirSync(path.join(f.workspace, "empty/nested"), { recursive: true });
    fs.mkdirSync(path.join(f.workspace, "locked"));
    f.put("locked/readme.txt", "ro");
    fs.chmodSync(path.join(f.workspace, "locked"), 0o555);
    fs.symlinkSync("src/main.py", path.join(f.workspace, "main-link"));
    f.hub.handToTenant();
    const before = manifest(f.workspace);

    const taken = await f.tool("snapshot_take", { name: "v1.0" });
    assert.equal(taken.isError, undefined, textOf(taken));
    assert.equal(structured(taken).files, 7);
    assert.equal(structured(taken).symlinks, 1);
    assert.ok(fs.existsSync(path.join(f.workspace, ".agentbox/snapshots/v1.0/meta.json")));

    // change everything: modify, delete, add, chmod, replace a folder with a file, retarget the link
    f.put("src/main.py", "print('v2')\n");
    fs.rmSync(path.join(f.workspace, "src/lib"), { recursive: true });
    fs.rmSync(path.join(f.workspace, "empty"), { recursive: true });
    f.put("new/added.txt", "new");
    f.put("stray.txt", "stray");
    fs.chmodSync(path.join(f.workspace, "run.sh"), 0o644);
    fs.chmodSync(path.join(f.workspace, "private.key"), 0o666);
    fs.unlinkSync(path.join(f.workspace, "main-link"));
    fs.symlinkSync("stray.txt", path.join(f.workspace, "main-link"));
    fs.chmodSync(path.join(f.workspace, "locked"), 0o755);
    fs.rmSync(path.join(f.workspace, "locked"), { recursive: true });
    f.put("locked", "now a file");
    f.hub.handToTenant();
    assert.notDeepEqual(manifest(f.workspace), before);

    const restored = await f.tool("snapshot_restore", { name: "v1.0" });
    assert.equal(restored.isError, undefined, textOf(restored));
    assert.deepEqual(manifest(f.workspace), before);
    assert.deepEqual(fs.readdirSync(path.join(f.workspace, ".agentbox")).sort(), ["snapshots"], "no staging or trash folders left behind");

    // restoring twice is the same, and the snapshot itself is intact after a restore
    f.put("another.txt", "x");
    await f.tool("snapshot_restore", { name: "v1.0" });
    assert.deepEqual(manifest(f.workspace), before);
  });

  test("list, overwrite protection and delete", async () => {
    await f.tool("snapshot_take", { name: "second" });
    const list = structured(await f.tool("snapshot_list", {}));
    assert.deepEqual(
      list.snapshots.map((s: { name: string }) => s.name),
      ["v1.0", "second"],
    );
    const again = await f.tool("snapshot_take", { name: "second" });
    assert.equal(again.isError, true);
    assert.match(textOf(again), /already exists; pass overwrite: true/);
    const overwritten = await f.tool("snapshot_take", { name: "second", overwrite: true });
    assert.equal(overwritten.isError, undefined, textOf(overwritten));

    const del = await f.tool("snapshot_delete", { name: "second" });
    assert.equal(del.isError, undefined, textOf(del));
    assert.ok(!fs.existsSync(path.join(f.workspace, ".agentbox/snapshots/second")));
    const gone = await f.tool("snapshot_restore", { name: "second" });
    assert.equal(gone.isError, true);
    assert.match(textOf(gone), /No snapshot named 'second'. Existing: v1\.0/);
    const gone2 = await f.tool("snapshot_delete", { name: "second" });
    assert.equal(gone2.isError, true);
  });

  test("snapshot names are validated", async () => {
    for (const name of ["../escape", "a/b", ".hidden", "..", "a..b", "with space", "x".repeat(65)]) {
      const r = await f.tool("snapshot_take", { name });
      assert.equal(r.isError, true, name);
      assert.match(textOf(r), /Invalid snapshot name .*use 1-64 letters/, name);
    }
    assert.ok(!fs.existsSync(path.join(f.workspace, ".agentbox/escape")));
    assert.ok(!fs.existsSync(path.join(f.workspace, "escape")));
    const restore = await f.tool("snapshot_restore", { name: "../../etc" });
    assert.equal(restore.isError, true);
    assert.match(textOf(restore), /Invalid snapshot name/);
  });
});
