// Paging a long text by characters, the same way in every server. One vocabulary throughout:
// `offset` is where a page starts, `maxChars` its size, and `nextOffset` where the next page
// starts (null after the last); counted pages (lines, results, entries) use `offset` and `limit`.
import { z } from "zod";

export const DEFAULT_MAX_CHARS = 20_000;
export const MAX_MAX_CHARS = 200_000;

/** The input fields of a tool that pages a text by characters. */
export const charPagingInput = {
  offset: z.number().int().min(0).default(0).describe("Character to start at: nextOffset of the previous page."),
  maxChars: z.number().int().min(1).max(MAX_MAX_CHARS).default(DEFAULT_MAX_CHARS).describe("Most characters to return."),
};

/** The output fields describing a page (its text goes where each tool puts it). */
export const textPageOutput = {
  totalChars: z.number().describe("Length of the whole text"),
  offset: z.number().describe("Offset of the first returned character"),
  end: z.number().describe("Offset just past the last returned character"),
  remaining: z.number().describe("Characters after this page"),
  nextOffset: z.number().nullable().describe("offset of the next page, or null when this was the last"),
};

export interface TextPage {
  text: string;
  totalChars: number;
  offset: number;
  end: number;
  remaining: number;
  nextOffset: number | null;
}

/** The characters [offset, offset + maxChars) of a text, and where the next page starts. */
export function pageOfText(text: string, offset: number, maxChars: number): TextPage {
  const from = Math.min(offset, text.length);
  let end = Math.min(text.length, from + maxChars);
  // never split a surrogate pair: the page would end in half a character
  if (end < text.length && end > from && /[\uD800-\uDBFF]/.test(text[end - 1]!)) end -= 1;
  const remaining = text.length - end;
  return { text: text.slice(from, end), totalChars: text.length, offset: from, end, remaining, nextOffset: remaining > 0 ? end : null };
}

/**
 * What the model reads: the page, then a line saying where it is and which call gets the rest
 * (`tool`: the published name of the tool to call again; without one, the rest is only counted).
 * A text that fits one page has no line.
 */
export function pagedText(page: TextPage, tool?: string): string {
  // pageOfText clamps the offset to the end, so an offset at or past it lands exactly there
  if (page.offset >= page.totalChars && page.totalChars > 0) {
    return `(offset ${page.offset} is past the end: the text has ${page.totalChars} characters)`;
  }
  if (page.offset === 0 && page.remaining === 0) return page.text;
  const where = `characters ${page.offset}-${page.end} of ${page.totalChars}`;
  const more = tool ? `: call ${tool} with offset=${page.nextOffset}` : " not shown";
  const next = page.nextOffset === null ? "end of text" : `${page.remaining} more${more}`;
  return `${page.text}\n\n[${where}; ${next}]`;
}
