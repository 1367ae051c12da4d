// Paging through list, tree, find, grep, read and read_many the way a model does: offset 0, then
// offset=nextOffset until it is null. Every item comes exactly once, in the order of one unpaged
// call; the text names the call that gets the next page; bad offsets and limits are refused.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { textOf } from "../helpers/hub.js";
import { startFiles, structured, type FileHarness } from "./harness.js";

let f: FileHarness;
before(async () => {
  f = await startFiles();
  for (let i = 0; i < 23; i++) f.put(`many/f${String(i).padStart(2, "0")}.txt`, `file ${i}\nneedle ${i}a\nhay\nneedle ${i}b\n`);
  for (const sub of ["sub1", "sub2", "sub3"]) {
    for (let i = 0; i < 4; i++) f.put(`many/${sub}/g${i}.txt`, `needle in ${sub} ${i}\n`);
  }
  f.put("lines.txt", Array.from({ length: 53 }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
});
after(async () => {
  await f?.stop();
});

type Data = Record<string, any>;

/**
 * Every page of a tool from offset 0 by nextOffset: the items (under `key`) of all pages in order,
 * checking each page starts where the last said and says how to get the next.
 */
async function pageThrough(tool: string, args: Data, key: string, limit: number): Promise<{ items: unknown[]; pages: Data[] }> {
  const pages: Data[] = [];
  let offset: number | null = 0;
  while (offset !== null) {
    const result = await f.tool(tool, { ...args, offset, limit });
    assert.equal(result.isError, undefined, textOf(result));
    const page: Data = structured(result);
    assert.equal(page.offset, offset);
    if (page.nextOffset !== null) {
      assert.ok(page.nextOffset > offset, "nextOffset moves forward");
      assert.match(textOf(result), new RegExp(`call file_${tool} with offset=${page.nextOffset}\\b`), "the text names the next call");
    }
    pages.push(page);
    assert.ok(pages.length <= 100, `${tool} never reaches a last page`);
    offset = page.nextOffset;
  }
  return { items: pages.flatMap((p) => (key === "text" ? p.text.split("\n").filter(Boolean) : p[key])), pages };
}

/** Paged with a small limit, the items are exactly those of one call with a large limit: none twice, none missed. */
async function assertPagesCoverAll(tool: string, args: Data, key: string, limit: number, expectedCount: number): Promise<Data[]> {
  const whole = structured(await f.tool(tool, { ...args, limit: 5000 }));
  const all = key === "text" ? whole.text.split("\n").filter(Boolean) : whole[key];
  assert.equal(all.length, expectedCount, `${tool}: the fixture has ${expectedCount} items`);
  assert.equal(whole.nextOffset, null, "one large page is the last");
  const { items, pages } = await pageThrough(tool, args, key, limit);
  assert.deepEqual(items, all);
  assert.equal(new Set(items.map((i) => JSON.stringify(i))).size, items.length, "no item twice");
  assert.equal(pages.length, Math.ceil(expectedCount / limit));
  assert.equal(pages.at(-1)!.nextOffset, null, "the last page has nextOffset null");
  return pages;
}

describe("paging a listing, a tree, a search and a file to the end", () => {
  test("list: entries 4 at a time, the total on every page", async () => {
    const pages = await assertPagesCoverAll("list", { path: "many" }, "entries", 4, 26);
    assert.ok(pages.every((p) => p.total === 26));
    assert.match(textOf(await f.tool("list", { path: "many", offset: 24, limit: 4 })), /\[entries 24-25 of 26; that was the last page\]/);
  });

  test("list: a folder of 600 entries, stat'ed in batches between turns of the event loop, lists every one once", async () => {
    for (let i = 0; i < 600; i++) f.put(`wide/e${String(i).padStart(3, "0")}`, "");
    const r = structured(await f.tool("list", { path: "wide", limit: 10_000 }));
    assert.equal(r.total, 600);
    assert.deepEqual(
      r.entries.map((e: { name: string }) => e.name),
      Array.from({ length: 600 }, (_, i) => `e${String(i).padStart(3, "0")}`),
    );
  });

  test("tree: entries 5 at a time, depth-first in name order", async () => {
    const pages = await assertPagesCoverAll("tree", { path: "many" }, "entries", 5, 23 + 3 + 12);
    // a walk read to its end knows the total
    assert.equal(pages.at(-1)!.total, 38);
    // a page that starts inside a folder names that entry by its whole path, so it has a parent
    const inside = textOf(await f.tool("tree", { path: "many", offset: 24, limit: 2 })).split("\n");
    assert.deepEqual(inside.slice(1, 3), ["  sub1/g0.txt", "  g1.txt"]);
  });

  test("find: results 3 at a time", async () => {
    await assertPagesCoverAll("find", { pattern: "*.txt", path: "many" }, "matches", 3, 35);
  });

  test("grep: matches 7 at a time, across files and within a file (two matches per file)", async () => {
    const pages = await assertPagesCoverAll("grep", { pattern: "needle", path: "many", context: 1 }, "matches", 7, 23 * 2 + 12);
    // a page boundary inside a file: both of f03's matches come, on different pages
    const where = pages.map((p) => p.matches.map((m: Data) => `${m.path}:${m.line}`));
    assert.ok(where.some((p) => p.at(-1) === "many/f03.txt:2") && where.some((p) => p[0] === "many/f03.txt:4"), JSON.stringify(where));
  });

  test("read: lines 10 at a time, offset counting lines from 0", async () => {
    const pages = await assertPagesCoverAll("read", { path: "lines.txt" }, "text", 10, 53);
    assert.equal(pages[0].text.split("\n")[0], "line 1");
    assert.equal(pages[1].offset, 10);
    assert.equal(pages[1].startLine, 11);
    assert.equal(pages.at(-1)!.totalLines, 53);
  });

  test("read_many: a file cut at limit says where file_read reads on", async () => {
    const r = await f.tool("read_many", { paths: ["lines.txt", "many/f00.txt"], limit: 20 });
    const [long, short] = structured(r).files;
    assert.equal(long.nextOffset, 20);
    assert.equal(short.nextOffset, null);
    assert.match(textOf(r), /call file_read with offset=20/);
    const rest = structured(await f.tool("read", { path: "lines.txt", offset: long.nextOffset, limit: 1 }));
    assert.equal(rest.text, "line 21");
  });
});

describe("bad offsets and limits are refused with what to give instead", () => {
  const cases: Array<[string, Data, number]> = [
    ["list", { path: "many" }, 10_000],
    ["tree", { path: "many" }, 10_000],
    ["find", { pattern: "*" }, 10_000],
    ["grep", { pattern: "needle" }, 5000],
    ["read", { path: "lines.txt" }, 10_000],
  ];
  for (const [tool, args, max] of cases) {
    test(`${tool}: negative offset, limit 0, limit over ${max}, offset past the end`, async () => {
      const negative = await f.tool(tool, { ...args, offset: -1 });
      assert.equal(negative.isError, true);
      assert.match(textOf(negative), new RegExp(`Invalid arguments for file_${tool}:\\n- offset: offset counts from 0`));
      const zero = await f.tool(tool, { ...args, limit: 0 });
      assert.equal(zero.isError, true);
      assert.match(textOf(zero), /limit: limit is the most [\w ]+ per page: at least 1/);
      const huge = await f.tool(tool, { ...args, limit: max + 1 });
      assert.equal(huge.isError, true);
      assert.match(textOf(huge), new RegExp(`limit can be at most ${max} \\w+ per page; read the rest with offset=nextOffset`));
      const fraction = await f.tool(tool, { ...args, offset: 1.5 });
      assert.equal(fraction.isError, true);
      assert.match(textOf(fraction), /offset/);
      const past = await f.tool(tool, { ...args, offset: 1_000_000 });
      assert.equal(past.isError, true);
      assert.match(textOf(past), /offset 1000000 is past the end/);
    });
  }

  test("an empty result is one page at offset 0, not an error", async () => {
    const none = await f.tool("find", { pattern: "*.nothing" });
    assert.equal(none.isError, undefined);
    assert.deepEqual(structured(none).matches, []);
    assert.equal(structured(none).nextOffset, null);
    const noMatch = await f.tool("grep", { pattern: "absent-word" });
    assert.equal(noMatch.isError, undefined);
    assert.equal(structured(noMatch).nextOffset, null);
  });
});
