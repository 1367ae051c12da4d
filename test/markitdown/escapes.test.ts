// markitdown_convert attacked as an agent would: a workspace path (or file: URI) swapped for a
// symlink pointing outside between the check and the read, a hard link to a file outside, and a
// saveTo folder swapped for a link. None may read or write outside the workspace.
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, startHub, tempDir, textOf, type TestHub } from "../helpers/hub.js";
import { tries, whileSwapping } from "../file/swapper.js";

const SECRET = "TOP SECRET";
let hub: TestHub;
let client: Client;
let ws: string;
let outside: string;

before(async () => {
  ws = tempDir("agentbox-md-esc-ws-");
  outside = tempDir("agentbox-md-esc-out-");
  fs.writeFileSync(path.join(outside, "doc.csv"), `secret\n${SECRET}\n`);
  fs.mkdirSync(path.join(ws, "d"));
  fs.writeFileSync(path.join(ws, "d", "doc.csv"), "name\nharmless\n");
  fs.writeFileSync(path.join(ws, "doc.csv"), "name\nharmless\n");
  fs.linkSync(path.join(outside, "doc.csv"), path.join(ws, "hl.csv"));
  hub = await startHub({ servers: ["markitdown"], workspace: ws });
  client = await hub.connect();
});
after(async () => {
  await hub?.stop();
  fs.rmSync(ws, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

const convert = (args: Record<string, unknown>) => call(client, "markitdown_convert", args);

async function leaks(args: () => Record<string, unknown>): Promise<number> {
  return (await tries(() => convert(args()))).filter((r) => JSON.stringify(r).includes(SECRET)).length;
}

describe("markitdown_convert escapes", () => {
  test("a folder swapped for a link while converting never yields the outside file", () =>
    whileSwapping(path.join(ws, "d"), outside, async () => {
      assert.equal(await leaks(() => ({ source: "d/doc.csv" })), 0, "workspace path");
      assert.equal(await leaks(() => ({ source: `file://${ws}/d/doc.csv` })), 0, "file: URI");
    }));

  test("a file swapped for a link while converting never yields the outside file", () =>
    whileSwapping(path.join(ws, "doc.csv"), path.join(outside, "doc.csv"), async () => {
      assert.equal(await leaks(() => ({ source: "doc.csv" })), 0);
    }));

  test("saveTo into a folder swapped for a link never writes outside", async () => {
    const before = fs.readdirSync(outside).sort();
    await whileSwapping(path.join(ws, "d"), outside, async () => {
      await tries((i) => convert({ content: Buffer.from("a\n1\n").toString("base64"), name: "x.csv", saveTo: `d/out-${i}.md` }));
    });
    assert.deepEqual(fs.readdirSync(outside).sort(), before);
  });

  test("a hard link to an outside file is refused, saying why and what to do", async () => {
    for (const source of ["hl.csv", `file://${ws}/hl.csv`]) {
      const r = await convert({ source });
      assert.equal(r.isError, true, textOf(r));
      assert.match(textOf(r), /hard link .*refusing to read it.*copy it into a normal file with a command/);
      assert.doesNotMatch(textOf(r), new RegExp(SECRET));
    }
  });

  test("without a swap the same conversions work (the races above are not vacuous)", async () => {
    const r = await convert({ source: "d/doc.csv" });
    assert.equal(r.isError, undefined, textOf(r));
    assert.match(textOf(r), /harmless/);
    const saved = await convert({ source: "doc.csv", saveTo: "d/calm.md" });
    assert.equal(saved.isError, undefined, textOf(saved));
    assert.match(fs.readFileSync(path.join(ws, "d", "calm.md"), "utf8"), /harmless/);
  });
});
