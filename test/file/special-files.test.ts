// An agent's special files in the workspace: a FIFO (with or without a writer holding it open) or
// a socket cannot hang the file server, which opens without blocking and by direct system calls
// (servers/lib/open-file.ts). Each tool answers at once with what the path is, and the server keeps
// serving the next call.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { textOf } from "../helpers/hub.js";
import { startFiles, structured, type FileHarness } from "./harness.js";

let f: FileHarness;
let writer: ChildProcess | undefined;
let socket: net.Server | undefined;
before(async () => {
  f = await startFiles();
  f.put("plain.txt", "plain\n");
  execFileSync("mkfifo", [path.join(f.workspace, "pipe")]);
  f.hub.handToTenant(path.join(f.workspace, "pipe"));
  socket = net.createServer().listen(path.join(f.workspace, "sock"));
  await new Promise((resolve) => socket!.once("listening", resolve));
});
after(async () => {
  writer?.kill();
  socket?.close();
  await f?.stop();
});

async function stillServes(): Promise<void> {
  const r = await f.tool("read", { path: "plain.txt" });
  assert.equal(structured(r).text, "plain\n");
}

describe("special files an agent makes", () => {
  for (const held of [false, true]) {
    test(`a FIFO${held ? " a writer holds open and never writes to" : ""} is refused by every reader, and nothing hangs`, async () => {
      if (held) {
        // as an agent's command would: hold the FIFO open (read-write, which does not wait for a reader) and never write
        writer = spawn("sh", ["-c", `exec 3<>'${path.join(f.workspace, "pipe")}'; echo holding; exec sleep 60`], { stdio: ["ignore", "pipe", "ignore"] });
        await new Promise((resolve) => writer!.stdout!.once("data", resolve));
      }
      for (const args of [{ path: "pipe" }, { path: "pipe", encoding: "base64" }]) {
        const r = await f.tool("read", args);
        assert.equal(r.isError, true);
        assert.match(textOf(r), /'pipe' is not a regular file/);
      }
      const many = await f.tool("read_many", { paths: ["pipe", "plain.txt"] });
      assert.deepEqual(
        structured(many).files.map((x: { ok: boolean }) => x.ok),
        [false, true],
      );
      const info = await f.tool("info", { path: "pipe" });
      assert.equal(structured(info).type, "other");
      const copy = await f.tool("copy", { source: "pipe", destination: `copy-${held}` });
      assert.equal(copy.isError, true);
      assert.match(textOf(copy), /'pipe' is not a regular file or a folder; only those are copied/);
      const grep = await f.tool("grep", { pattern: "plain", path: "." });
      assert.match(textOf(grep), /plain\.txt/);
      await stillServes();
    });
  }

  test("a Unix socket is refused by the readers and described by info", async () => {
    const r = await f.tool("read", { path: "sock" });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /'sock' is a socket .*not a regular file/);
    assert.equal(structured(await f.tool("info", { path: "sock" })).type, "other");
    await stillServes();
  });
});
