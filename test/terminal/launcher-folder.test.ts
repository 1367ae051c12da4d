// The launcher's socket folder (servers/terminal/launcher-folder.ts): private, and those a server
// killed outright left behind are removed by the next, never one another server still listens in
// or has only just made, nor another user's.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { launcherFolder } from "../../servers/terminal/launcher-folder.js";

test("a new folder is private, and only stale ones of this user are removed", async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "agentbox-folder-test-"));
  const old = new Date(Date.now() - 120_000);
  const make = (name: string) => {
    const dir = path.join(tmp, name);
    fs.mkdirSync(dir);
    return dir;
  };
  const age = (dir: string) => fs.utimesSync(dir, old, old);
  const dead = make("agentbox-launch-dead");
  fs.writeFileSync(path.join(dead, "s"), "");
  const live = make("agentbox-launch-live");
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(path.join(live, "s"), resolve));
  make("agentbox-launch-young");
  const unrelated = make("someone-elses");
  const foreign = make("agentbox-launch-foreign");
  if (process.getuid?.() === 0) fs.chownSync(foreign, 40_002, 40_002);
  for (const dir of [dead, live, unrelated, foreign]) age(dir);
  try {
    const { dir, socketPath } = launcherFolder(tmp);
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
    assert.equal(path.dirname(socketPath), dir);
    const left = fs.readdirSync(tmp).sort();
    assert.ok(!left.includes("agentbox-launch-dead"), left.join(", "));
    for (const kept of ["agentbox-launch-live", "agentbox-launch-young", "someone-elses"]) assert.ok(left.includes(kept), `${kept} removed`);
    if (process.getuid?.() === 0) assert.ok(left.includes("agentbox-launch-foreign"), "another user's folder removed");
  } finally {
    server.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test("a temporary folder whose path leaves no room for a socket is refused by name, and nothing is left", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "agentbox-folder-test-"));
  const deep = path.join(tmp, "x".repeat(90));
  fs.mkdirSync(deep);
  try {
    assert.throws(() => launcherFolder(deep), /too long for a socket/);
    assert.deepEqual(fs.readdirSync(deep), []);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
