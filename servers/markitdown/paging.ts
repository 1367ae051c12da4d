// One window onto a long text, for `convert` and arxiv `read`: the caller asks for
// [start, start + maxChars) and learns how much remains and where to continue.
import { z } from "zod";

export const DEFAULT_MAX_CHARS = 20_000;
export const MAX_MAX_CHARS = 200_000;

export const pagingInput = {
  start: z.number().int().min(0).default(0).describe("Character offset to start at; nextStart of the previous page."),
  maxChars: z
    .number()
    .int()
    .min(1)
    .max(MAX_MAX_CHARS)
    .default(DEFAULT_MAX_CHARS)
    .describe("Most characters to return."),
};

export const pageOutput = {
  totalChars: z.number().describe("Length of the whole text"),
  start: z.number().describe("Offset of the first returned character"),
  end: z.number().describe("Offset just past the last returned character"),
  remaining: z.number().describe("Characters after this page"),
  nextStart: z.number().nullable().describe("start for the next page, or null when this was the last"),
};

export interface Page {
  text: string;
  totalChars: number;
  start: number;
  end: number;
  remaining: number;
  nextStart: number | null;
}

export function pageOf(text: string, start: number, maxChars: number): Page {
  const from = Math.min(start, text.length);
  let end = Math.min(text.length, from + maxChars);
  // never split a surrogate pair: the page would end in half a character
  if (end < text.length && end > from && /[\uD800-\uDBFF]/.test(text[end - 1]!)) end -= 1;
  const remaining = text.length - end;
  return { text: text.slice(from, end), totalChars: text.length, start: from, end, remaining, nextStart: remaining > 0 ? end : null };
}

/** The line appended to a page that tells the model where it is and how to go on. */
export function pageFooter(page: Page): string {
  if (page.start === 0 && page.remaining === 0) return "";
  const where = `characters ${page.start}–${page.end} of ${page.totalChars}`;
  return page.remaining > 0
    ? `\n\n[${where}; ${page.remaining} more — call again with start=${page.nextStart}]`
    : `\n\n[${where}; end of text]`;
}
