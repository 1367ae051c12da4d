// The one pager every server uses: character pages that join up to the whole text, never half a
// character; item pages (in memory or streamed) that give every item exactly once; input fields
// that refuse nonsense; and a line that names the call which gets the rest.
import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";
import {
  assertOffsetInRange,
  charPagingInput,
  DEFAULT_CHAR_LIMIT,
  pageFooter,
  pagedText,
  pageOfItems,
  pageOfStream,
  pageOfText,
  pagingInput,
  type ItemPage,
} from "../../servers/lib/paging.js";

test("pages follow nextOffset to the end and join up to the whole text", () => {
  const text = "abcdefghij".repeat(25);
  let offset: number | null = 0;
  let joined = "";
  let pages = 0;
  while (offset !== null) {
    const page = pageOfText(text, offset, 40);
    assert.equal(page.offset, offset);
    assert.equal(page.end, offset + page.text.length);
    assert.equal(page.remaining, text.length - page.end);
    assert.equal(page.totalChars, text.length);
    joined += page.text;
    offset = page.nextOffset;
    pages++;
  }
  assert.equal(joined, text);
  assert.equal(pages, Math.ceil(text.length / 40));
});

test("a page never ends in half a surrogate pair", () => {
  const text = "ab😀cd";
  const page = pageOfText(text, 0, 3);
  assert.equal(page.text, "ab");
  assert.equal(page.nextOffset, 2);
  assert.equal(pageOfText(text, 2, 3).text, "😀c");
});

test("the line under a page says where it is and which call gets the rest", () => {
  const text = "x".repeat(100);
  assert.equal(pagedText(pageOfText("short", 0, 100), "file_read"), "short", "a text that fits has no line");
  assert.match(pagedText(pageOfText(text, 0, 30), "browser_get_text"), /\n\n\[characters 0-30 of 100; 70 more: call browser_get_text with offset=30\]$/);
  assert.match(pagedText(pageOfText(text, 90, 30), "browser_get_text"), /\[characters 90-100 of 100; end of text\]$/);
  assert.match(pagedText(pageOfText(text, 0, 30)), /\[characters 0-30 of 100; 70 more not shown\]$/);
  assert.equal(pagedText(pageOfText(text, 500, 30), "arxiv_read"), "(offset 100 is past the end: the text has 100 characters)");
});

test("the shared input fields default to the first page of DEFAULT_CHAR_LIMIT and refuse nonsense", () => {
  const input = z.object(charPagingInput).strict();
  assert.deepEqual(input.parse({}), { offset: 0, limit: DEFAULT_CHAR_LIMIT });
  for (const bad of [{ offset: -1 }, { offset: 1.5 }, { limit: 0 }, { limit: 10_000_000 }, { start: 5 }, { maxChars: 100 }]) {
    assert.equal(input.safeParse(bad).success, false, JSON.stringify(bad));
  }
});

test("a bad offset or limit is refused with a message that says what to give instead", () => {
  const input = z.object(pagingInput({ unit: "entry", units: "entries", defaultLimit: 10, maxLimit: 50, maxOffset: 1000 }));
  const message = (args: object) => {
    const parsed = input.safeParse(args);
    assert.equal(parsed.success, false, JSON.stringify(args));
    return parsed.error!.issues.map((i) => i.message).join("; ");
  };
  assert.match(message({ offset: -1 }), /offset counts from 0: give 0 for the first entry, then the nextOffset of the previous page/);
  assert.match(message({ limit: 0 }), /limit is the most entries per page: at least 1/);
  assert.match(message({ limit: 51 }), /limit can be at most 50 entries per page; read the rest with offset=nextOffset/);
  assert.match(message({ offset: 1001 }), /offset can be at most 1000/);
  assert.equal((input.shape.limit as z.ZodTypeAny).description, "Most entries per page");
  // default and maximum are published as the schema's own keywords
  const published = z.toJSONSchema(input) as { properties: Record<string, { default?: number; maximum?: number; minimum?: number }> };
  assert.deepEqual([published.properties.limit.default, published.properties.limit.maximum], [10, 50]);
  assert.deepEqual([published.properties.offset.default, published.properties.offset.minimum], [0, 0]);
});

/** Every page from offset 0 by nextOffset, as a model would read them. */
async function readAll<T>(pageAt: (offset: number) => Promise<ItemPage<T>> | ItemPage<T>): Promise<{ items: T[]; pages: ItemPage<T>[] }> {
  const pages: ItemPage<T>[] = [];
  let offset: number | null = 0;
  while (offset !== null) {
    const page: ItemPage<T> = await pageAt(offset);
    assert.equal(page.offset, offset);
    pages.push(page);
    assert.ok(pages.length < 1000, "paging does not end");
    offset = page.nextOffset;
  }
  return { items: pages.flatMap((p) => p.items), pages };
}

async function* numbers(count: number): AsyncGenerator<number> {
  for (let i = 0; i < count; i++) yield i;
}

test("item pages, in memory and streamed, give every item exactly once and end with nextOffset null", async () => {
  const all = Array.from({ length: 23 }, (_, i) => i);
  for (const limit of [1, 5, 22, 23, 24, 100]) {
    const memory = await readAll((offset) => pageOfItems(all, offset, limit));
    const stream = await readAll((offset) => pageOfStream(numbers(all.length), offset, limit));
    for (const { items, pages } of [memory, stream]) {
      assert.deepEqual(items, all, `limit ${limit}`);
      assert.equal(pages.length, Math.ceil(all.length / limit));
      assert.equal(pages.at(-1)!.nextOffset, null);
      assert.equal(pages.at(-1)!.total, all.length, "the last page knows the total");
    }
  }
  // a streamed page reads one item past itself, not the whole source
  let pulled = 0;
  async function* counted() {
    for (let i = 0; i < 1000; i++) {
      pulled++;
      yield i;
    }
  }
  const first = await pageOfStream(counted(), 10, 5);
  assert.deepEqual(first.items, [10, 11, 12, 13, 14]);
  assert.equal(first.nextOffset, 15);
  assert.equal(first.total, undefined);
  assert.equal(pulled, 16);
});

test("an empty list is one page; an offset past the end is refused with how many there are", async () => {
  const empty = pageOfItems([], 0, 10);
  assert.deepEqual(empty, { items: [], offset: 0, nextOffset: null, total: 0 });
  assert.doesNotThrow(() => assertOffsetInRange(empty, "entries"));
  assert.throws(
    () => assertOffsetInRange(pageOfItems([1, 2, 3], 3, 10), "entries"),
    /offset 3 is past the end \(entries: 3, offsets 0-2\)\. Start again from offset 0\./,
  );
  assert.throws(() => assertOffsetInRange(pageOfItems([1, 2, 3], 99, 10), "entries"), /offset 99 is past the end/);
  const streamed = await pageOfStream(numbers(2), 7, 3);
  assert.throws(() => assertOffsetInRange(streamed, "matches"), /offset 7 is past the end \(matches: 2, offsets 0-1\)/);
});

test("the line under a page of items names the call that gets the next", async () => {
  const all = Array.from({ length: 25 }, (_, i) => i);
  assert.equal(pageFooter(pageOfItems(all, 0, 30), "entries", "file_list"), undefined, "one page, no line");
  assert.equal(pageFooter(pageOfItems(all, 0, 10), "entries", "file_list"), "[entries 0-9 of 25; 15 more: call file_list with offset=10]");
  assert.equal(pageFooter(pageOfItems(all, 20, 10), "entries", "file_list"), "[entries 20-24 of 25; that was the last page]");
  assert.equal(pageFooter(await pageOfStream(numbers(25), 0, 10), "matches", "file_grep"), "[matches 0-9; more follow: call file_grep with offset=10]");
});
