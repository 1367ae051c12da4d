// The shared path guard and the descriptor checks, unit by unit: the mistakes server-filesystem's
// CVEs came from (a prefix without a separator, following links) and the other edges.
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { isInside, resolveInWorkspace } from "../../servers/lib/workspace.js";
import { openDirIn, openVerified } from "../../servers/lib/safe-fs.js";
import { tempDir } from "../helpers/hub.js";

describe("isInside", () => {
  test("a sibling sharing the root as a prefix is outside", () => {
    assert.equal(isInside("/ws", "/ws-evil/x"), false);
    assert.equal(isInside("/ws", "/wsx"), false);
    assert.equal(isInside("/ws", "/ws/x"), true);
    assert.equal(isInside("/ws", "/ws"), true);
  });

  test("'..' out is outside, a name merely starting with '..' is inside", () => {
    assert.equal(isInside("/ws", "/ws/../etc"), false);
    assert.equal(isInside("/ws", "/ws/a/../../etc"), false);
    assert.equal(isInside("/ws", "/"), false);
    assert.equal(isInside("/ws", "/ws/..hidden"), true);
  });
});

describe("resolveInWorkspace and the descriptor checks", () => {
  let ws: string;
  let outside: string;
  before(() => {
    ws = tempDir("agentbox-guard-ws-");
    outside = tempDir("agentbox-guard-out-");
    fs.writeFileSync(path.join(outside, "secret.txt"), "secret\n");
    fs.writeFileSync(path.join(ws, "ok.txt"), "ok\n");
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(ws, "out-link"));
    fs.symlinkSync(outside, path.join(ws, "out-dir"));
    fs.symlinkSync(path.join(ws, "nowhere"), path.join(ws, "dangling"));
    fs.linkSync(path.join(outside, "secret.txt"), path.join(ws, "hard.txt"));
  });
  after(() => {
    fs.rmSync(ws, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  test("NUL bytes, traversal, prefix siblings and links out are refused", () => {
    assert.throws(() => resolveInWorkspace(ws, "ok.txt\0.png"), /NUL byte/);
    assert.throws(() => resolveInWorkspace(ws, "../x"), /outside the workspace/);
    assert.throws(() => resolveInWorkspace(ws, `${ws}-evil/x`), /outside the workspace/);
    assert.throws(() => resolveInWorkspace(ws, "out-link"), /outside the workspace/);
    assert.throws(() => resolveInWorkspace(ws, "out-dir/secret.txt"), /outside the workspace/);
    assert.throws(() => resolveInWorkspace(ws, "file:///etc/passwd"), /outside the workspace/);
  });

  test("a dangling link is refused, also as a parent of a new path", () => {
    assert.throws(() => resolveInWorkspace(ws, "dangling"), /dangling symlink/);
    assert.throws(() => resolveInWorkspace(ws, "dangling/new.txt", { allowMissing: true }), /dangling symlink/);
  });

  test("openVerified refuses a final link and a hard link; openDirIn never passes through a link", async () => {
    // the guard resolved ok.txt; were it now a link, O_NOFOLLOW stops the open
    await assert.rejects(openVerified(ws, path.join(ws, "out-link"), "out-link"), /replaced by a symlink/);
    await assert.rejects(openVerified(ws, path.join(ws, "hard.txt"), "hard.txt"), /hard link/);
    // a folder on the way that is a link: the descriptor is outside, and says so
    await assert.rejects(openVerified(ws, path.join(ws, "out-dir", "secret.txt"), "out-dir/secret.txt"), /outside the workspace/);
    await assert.rejects(openDirIn(ws, path.join(ws, "out-dir")), /not a folder/);
    await assert.rejects(openDirIn(ws, path.join(outside)), /outside the workspace/);
    const ok = await openVerified(ws, path.join(ws, "ok.txt"), "ok.txt");
    assert.equal(await ok.handle.readFile("utf8"), "ok\n");
    await ok.handle.close();
  });
});
