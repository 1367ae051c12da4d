// OpenFile (servers/lib/open-file.ts): a descriptor the file server opens, reads and closes by
// direct system calls. A raw descriptor number is reused by the kernel for the next file opened,
// so what matters is that no read and no close ever reaches a file opened later under the same
// number: not a second close, not a read after close, not a read still running in the pool.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, describe, test } from "node:test";
import { IN_PLACE_BYTES, OpenFile } from "../../servers/lib/open-file.js";
import { tempDir } from "../helpers/hub.js";

const dir = tempDir("agentbox-open-file-");
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string | Buffer): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, content);
  return p;
}

const small = file("small.txt", "small file\n");
const large = file("large.bin", Buffer.alloc(IN_PLACE_BYTES * 3, "L"));
const other = file("other.txt", "the other file\n");

describe("OpenFile", () => {
  test("reads in place and in the pool give the file's bytes; a read past the end gives fewer", async () => {
    const f = OpenFile.open(large, fs.constants.O_RDONLY);
    try {
      const head = Buffer.alloc(10);
      assert.equal((await f.read(head, 0, 10, 0)).bytesRead, 10);
      assert.equal(head.toString(), "LLLLLLLLLL");
      const whole = Buffer.alloc(IN_PLACE_BYTES * 3 + 100);
      assert.equal((await f.read(whole, 0, whole.length, 0)).bytesRead, IN_PLACE_BYTES * 3);
      assert.equal((await f.readFile()).length, IN_PLACE_BYTES * 3);
      assert.equal((await f.stat()).size, IN_PLACE_BYTES * 3);
    } finally {
      await f.close();
    }
    const s = OpenFile.open(small, fs.constants.O_RDONLY);
    assert.equal(await s.readFile("utf8"), "small file\n");
    await s.close();
  });

  test("a second close does not close the file opened meanwhile under the same number", async () => {
    const first = OpenFile.open(small, fs.constants.O_RDONLY);
    const number = first.fd;
    // closed and opened in one turn of the event loop, so that nothing else opens or closes meanwhile
    first.closeNow();
    const second = OpenFile.open(other, fs.constants.O_RDONLY);
    try {
      assert.equal(second.fd, number, "the kernel hands out the lowest free number: the test relies on it");
      await first.close();
      assert.equal(await second.readFile("utf8"), "the other file\n");
      assert.equal(first.fd, -1);
      await assert.rejects(first.read(Buffer.alloc(4), 0, 4, 0), { code: "EBADF" });
      await assert.rejects(first.stat(), { code: "EBADF" });
    } finally {
      await second.close();
    }
  });

  test("a read still in the pool when the file is closed keeps its descriptor until it is done", async () => {
    const f = OpenFile.open(large, fs.constants.O_RDONLY);
    const number = f.fd;
    const buffer = Buffer.alloc(IN_PLACE_BYTES * 2);
    const reading = f.read(buffer, 0, buffer.length, 0);
    f.closeNow();
    // had the number been freed, the next open would get it, and the pool's read could land on that file
    const next = OpenFile.open(other, fs.constants.O_RDONLY);
    try {
      assert.notEqual(next.fd, number);
      assert.equal((await reading).bytesRead, buffer.length);
      assert.equal(buffer.subarray(0, 4).toString(), "LLLL");
      assert.throws(() => fs.fstatSync(number), { code: "EBADF" }, "closed once the read is done");
    } finally {
      await next.close();
    }
  });

  test("writes in place and in the pool land whole and in order, and sync flushes them", async () => {
    const target = path.join(dir, "written.bin");
    const f = OpenFile.open(target, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
    const big = Buffer.alloc(IN_PLACE_BYTES * 2 + 7, "B");
    try {
      await f.write(Buffer.from("head:"));
      await f.write(big);
      await f.write(Buffer.from(":tail"));
      await f.sync();
      await f.chmod(0o640);
    } finally {
      await f.close();
    }
    assert.deepEqual(fs.readFileSync(target), Buffer.concat([Buffer.from("head:"), big, Buffer.from(":tail")]));
    assert.equal(fs.statSync(target).mode & 0o777, 0o640);
  });

  test("a stream reads through it and leaves the file open; closing ends the stream's reads", async () => {
    const f = OpenFile.open(large, fs.constants.O_RDONLY);
    let total = 0;
    for await (const chunk of f.createReadStream({ start: 0, autoClose: false })) total += (chunk as Buffer).length;
    assert.equal(total, IN_PLACE_BYTES * 3);
    assert.equal((await f.stat()).size, IN_PLACE_BYTES * 3, "still open after the stream ended");
    const stream = f.createReadStream({ start: 0, autoClose: false });
    await f.close();
    await assert.rejects(
      (async () => {
        for await (const _ of stream) void _;
      })(),
      { code: "EBADF" },
    );
  });
});
