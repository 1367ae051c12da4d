// The one character pager every server uses: pages that join up to the whole text, never half a
// character, and a line that names the call which gets the rest.
import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";
import { charPagingInput, DEFAULT_MAX_CHARS, pagedText, pageOfText } from "../../servers/lib/paging.js";

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

test("the shared input fields default to the first page of DEFAULT_MAX_CHARS and refuse nonsense", () => {
  const input = z.object(charPagingInput).strict();
  assert.deepEqual(input.parse({}), { offset: 0, maxChars: DEFAULT_MAX_CHARS });
  for (const bad of [{ offset: -1 }, { offset: 1.5 }, { maxChars: 0 }, { maxChars: 10_000_000 }, { start: 5 }]) {
    assert.equal(input.safeParse(bad).success, false, JSON.stringify(bad));
  }
});
