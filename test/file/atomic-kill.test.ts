// A write killed halfway leaves the target exactly as it was. The write is an append to a large
// file (the server copies the current content into a temp file first, which takes a while); the
// file server is frozen the moment its temp file appears, then killed with SIGKILL.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { descendantsOf } from "../../servers/lib/proc-table.js";
import { textOf } from "../helpers/hub.js";
import { startFiles, type FileHarness } from "./harness.js";
import { until } from "../helpers/wait.js";

let f: FileHarness;
before(async () => {
  f = await startFiles();
});
after(async () => {
  await f?.stop();
});

function fileServerPid(hubPid: number): number {
  const pids = descendantsOf(hubPid)
    .map((p) => p.pid)
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(path.join("servers", "file", "main.js"));
      } catch {
        return false;
      }
    });
  assert.equal(pids.length, 1, "exactly one file server process under the hub");
  return pids[0];
}

const sha = (p: string) => crypto.createHash("sha256").update(fs.readFileSync(p)).digest("hex");

async function untilReady(): Promise<void> {
  await until(
    "the file server to come back",
    async () => {
      const r = await f.tool("info", { path: "." }).catch(() => undefined);
      return r && !r.isError;
    },
    20_000,
  );
}

test("a write killed mid-way leaves the old file intact", async () => {
  let caught = false;
  for (let attempt = 0, mib = 64; attempt < 4 && !caught; attempt++, mib *= 2) {
    await untilReady();
    const target = f.put("journal.log", Buffer.alloc(mib * 1024 * 1024, "a"));
    const original = sha(target);
    const pid = fileServerPid(f.hub.pid);
    let tempSeen: string | undefined;
    const watcher = fs.watch(f.workspace, (_event, name) => {
      if (tempSeen || !name?.includes(".agentbox-tmp-")) return;
      tempSeen = name;
      process.kill(pid, "SIGSTOP"); // freeze it first: deciding below must not race the rename
    });
    const pending = f.tool("write", { path: "journal.log", content: "new entry\n", append: true }).then(
      (r) => ({ error: r.isError === true, text: textOf(r) }),
      (err: Error) => ({ error: true, text: err.message }),
    );
    // polled every millisecond: the freeze must come before the rename
    const temp = await until("the write to use a temp file in the target's folder", () => tempSeen, 30_000, 1).finally(() => watcher.close());
    const midWrite = fs.existsSync(path.join(f.workspace, temp));
    process.kill(pid, "SIGKILL");
    process.kill(pid, "SIGCONT");
    const outcome = await pending;
    if (!midWrite) continue; // the rename beat the freeze: try again with a bigger file
    caught = true;
    assert.equal(outcome.error, true, "the killed call fails");
    assert.equal(sha(target), original, "the target still holds exactly its old content");
    assert.equal(fs.statSync(target).size, mib * 1024 * 1024);
  }
  assert.ok(caught, "the server was killed while the write was in progress");

  // the hub brings the server back; the file reads as before and writing works again
  await untilReady();
  const tail = await f.tool("read", { path: "journal.log", encoding: "base64", offset: fs.statSync(path.join(f.workspace, "journal.log")).size - 4 });
  assert.equal(tail.isError, undefined, textOf(tail));
  const ok = await f.tool("write", { path: "journal.log", content: "after restart\n" });
  assert.equal(ok.isError, undefined, textOf(ok));
  assert.equal(fs.readFileSync(path.join(f.workspace, "journal.log"), "utf8"), "after restart\n");
});
