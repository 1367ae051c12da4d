// Check-then-use races, attacked as an agent would: a command keeps swapping a workspace folder
// (or file) for a symlink pointing outside while the file tools use it. Before the tools opened
// first and verified the descriptor, hundreds of these calls read, wrote or deleted outside.
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { tempDir, textOf } from "../helpers/hub.js";
import { startFiles, type FileHarness } from "./harness.js";
import { RACE_TRIES, tries, whileSwapping } from "./swapper.js";

const SECRET = "TOP SECRET";
let f: FileHarness;
let outside: string;
let outsideMany: string;
let outsideBefore: string[];

before(async () => {
  f = await startFiles();
  outside = tempDir("agentbox-race-outside-");
  fs.writeFileSync(path.join(outside, "secret.txt"), `${SECRET}\n`);
  outsideMany = tempDir("agentbox-race-outside-many-");
  for (let i = 0; i < RACE_TRIES; i++) {
    // names on both sides: the inside copy may go, the outside one must stay
    fs.writeFileSync(path.join(outsideMany, `doomed-${i}.txt`), "outside\n");
    fs.writeFileSync(path.join(outsideMany, `m-${i}.txt`), "outside\n");
    f.put(`e/doomed-${i}.txt`, "inside\n");
    f.put(`e/m-${i}.txt`, "inside\n");
  }
  f.put("d/secret.txt", "harmless\n");
  f.put("victim.txt", "harmless\n");
  f.put("inside.txt", "inside\n");
  outsideBefore = fs.readdirSync(outside).sort();
});

after(async () => {
  await f?.stop();
  fs.rmSync(outside, { recursive: true, force: true });
  fs.rmSync(outsideMany, { recursive: true, force: true });
});

const swapDir = <T>(fn: () => Promise<T>) => whileSwapping(path.join(f.workspace, "d"), outside, fn);
const swapFile = <T>(fn: () => Promise<T>) => whileSwapping(path.join(f.workspace, "victim.txt"), path.join(outside, "secret.txt"), fn);

/** Every call either works on the inside entry or is refused; none may show the outside secret. */
async function neverLeaks(tool: string, args: (i: number) => Record<string, unknown>): Promise<void> {
  const leaks = (await tries((i) => f.tool(tool, args(i)))).filter((r) => JSON.stringify(r).includes(SECRET)).length;
  assert.equal(leaks, 0, `${tool} showed the outside file in ${leaks} of ${RACE_TRIES} calls`);
}

/** Regular files under the workspace (its private folder included, links never followed) holding the secret. */
export function filesHolding(root: string, needle: string, rel = ""): string[] {
  const found: string[] = [];
  for (const d of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const child = rel ? `${rel}/${d.name}` : d.name;
    if (d.isDirectory()) found.push(...filesHolding(root, needle, child));
    else if (d.isFile() && fs.readFileSync(path.join(root, child), "utf8").includes(needle)) found.push(child);
  }
  return found;
}

describe("racing a symlink swap", () => {
  test("read, read_many, grep and edit never read through a swapped folder", () =>
    swapDir(async () => {
      await neverLeaks("read", () => ({ path: "d/secret.txt" }));
      await neverLeaks("read_many", () => ({ paths: ["d/secret.txt"] }));
      await neverLeaks("grep", () => ({ pattern: "SECRET|harmless", path: "d" }));
      await neverLeaks("edit", () => ({ path: "d/secret.txt", dryRun: true, edits: [{ oldText: "TOP", newText: "NOT" }] }));
    }));

  test("read never reads a file swapped for a link", () =>
    swapFile(async () => {
      await neverLeaks("read", () => ({ path: "victim.txt" }));
      await neverLeaks("read", () => ({ path: "victim.txt", encoding: "base64" }));
    }));

  test("resources/read never returns the outside file", () =>
    swapDir(async () => {
      const reads = await tries(() => f.client.readResource({ uri: "file:///d/secret.txt" }).catch((err: Error) => err.message));
      const leaks = reads.filter((r) => JSON.stringify(r).includes(SECRET)).length;
      assert.equal(leaks, 0, `resources/read leaked in ${leaks} of ${RACE_TRIES} reads`);
    }));

  test("copy never brings the outside file in, as a file or inside a folder", async () => {
    await swapDir(async () => {
      await tries((i) =>
        Promise.all([
          f.tool("copy", { source: "d/secret.txt", destination: `copies/file-${i}.txt` }),
          f.tool("copy", { source: "d", destination: `copies/dir-${i}` }),
        ]),
      );
    });
    await swapFile(async () => {
      await tries((i) => f.tool("copy", { source: "victim.txt", destination: `copies/victim-${i}.txt` }));
    });
    assert.deepEqual(filesHolding(f.workspace, SECRET), []);
    const links = fs.readdirSync(path.join(f.workspace, "copies")).filter((n) => fs.lstatSync(path.join(f.workspace, "copies", n)).isSymbolicLink());
    assert.deepEqual(links, [], "copying a folder or file never yields a link to what was swapped in");
  });

  test("write, edit, copy and mkdir never create or change anything outside", async () => {
    await swapDir(async () => {
      await tries((i) =>
        Promise.all([
          f.tool("write", { path: `d/planted-${i}.txt`, content: "planted" }),
          f.tool("copy", { source: "inside.txt", destination: `d/copied-${i}.txt` }),
          f.tool("mkdir", { path: `d/dir-${i}/sub` }),
          f.tool("edit", { path: "d/secret.txt", edits: [{ oldText: "harmless", newText: "harmless" }] }),
        ]),
      );
    });
    await swapFile(async () => {
      await tries((i) => f.tool("write", { path: "victim.txt", content: "planted\n", append: i % 2 === 0 }));
    });
    assert.deepEqual(fs.readdirSync(outside).sort(), outsideBefore);
    assert.equal(fs.readFileSync(path.join(outside, "secret.txt"), "utf8"), `${SECRET}\n`);
    assert.deepEqual(filesHolding(f.workspace, SECRET), [], "appending never copied the outside file in");
  });

  test("delete and move never remove or take an outside file", async () => {
    await whileSwapping(path.join(f.workspace, "e"), outsideMany, async () => {
      await tries((i) =>
        Promise.all([f.tool("delete", { path: `e/doomed-${i}.txt` }), f.tool("move", { source: `e/m-${i}.txt`, destination: `moved/m-${i}.txt` })]),
      );
    });
    const names = fs.readdirSync(outsideMany);
    assert.equal(names.length, 2 * RACE_TRIES);
    for (const name of names) assert.equal(fs.readFileSync(path.join(outsideMany, name), "utf8"), "outside\n", name);
  });

  test("the same calls work when nothing swaps (the races above are not vacuous)", async () => {
    assert.equal(textOf(await f.tool("read", { path: "d/secret.txt" })).trim(), "harmless");
    const copied = await f.tool("copy", { source: "d/secret.txt", destination: "calm-copy.txt", overwrite: true });
    assert.equal(copied.isError, undefined, textOf(copied));
    assert.equal(fs.readFileSync(path.join(f.workspace, "calm-copy.txt"), "utf8"), "harmless\n");
  });
});

describe("racing a symlink swap while taking snapshots", () => {
  let s: FileHarness;
  before(async () => {
    s = await startFiles();
    s.put("d/secret.txt", "harmless\n");
    s.put("d/other.txt", "other\n");
  });
  after(() => s?.stop());

  test("a snapshot never captures the outside folder, and restoring never writes outside", async () => {
    await whileSwapping(path.join(s.workspace, "d"), outside, async () => {
      for (let i = 0; i < 60; i++) await s.tool("snapshot_take", { name: `race-${i}` });
    });
    assert.deepEqual(filesHolding(s.workspace, SECRET), []);
    await whileSwapping(path.join(s.workspace, "d"), outside, async () => {
      for (let i = 0; i < 20; i++) await s.tool("snapshot_restore", { name: `race-${i}` });
    });
    assert.deepEqual(fs.readdirSync(outside).sort(), outsideBefore);
  });
});
