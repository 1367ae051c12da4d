// Paging, the same way in every server. One vocabulary throughout: `offset` is the 0-based index of
// the first item of a page (a line, entry, match, result or character), `limit` the most items a
// page holds, and `nextOffset` where the next page starts (null after the last), so "call again
// with offset=nextOffset" is the one rule for reading on. Text the model reads says that call.
import { z } from "zod";
import { ToolError } from "./tool.js";

export const DEFAULT_CHAR_LIMIT = 20_000;
export const MAX_CHAR_LIMIT = 200_000;

/**
 * The `offset` input: 0-based, in `unit`s ("line", "entry", ...). It has no description: an integer
 * from 0 named offset next to "Most entries per page" says it, every page's text names the exact
 * next call, and the catalog budget (bench/catalog-size.ts) has no room for the same sentence in
 * every paging tool. A tool whose offset needs more (file_read: lines or bytes) describes its own.
 */
export function offsetField(unit: string, maxOffset?: number) {
  const base = z.number().int().min(0, `offset counts from 0: give 0 for the first ${unit}, then the nextOffset of the previous page`);
  return maxOffset === undefined ? base : base.max(maxOffset, `offset can be at most ${maxOffset} here`);
}

/** Why a limit over the most a page may hold is refused, and what to do instead. */
export const limitTooBig = (units: string, maxLimit: number) => `limit can be at most ${maxLimit} ${units} per page; read the rest with offset=nextOffset`;

/** The `limit` input without a default (for a tool whose default depends on another argument); `units` is plural. */
export function limitField(units: string, maxLimit: number) {
  return z.number().int().min(1, `limit is the most ${units} per page: at least 1`).max(maxLimit, limitTooBig(units, maxLimit));
}

export interface PagingSpec {
  /** What is counted, singular: "line", "entry", "match", "character". */
  unit: string;
  /** Its plural when not unit + "s": "entries", "matches". */
  units?: string;
  defaultLimit: number;
  maxLimit: number;
  /** Where a source cannot start past a point (arXiv: 30000). */
  maxOffset?: number;
}

/** The input fields `offset` and `limit` of a tool that pages. */
export function pagingInput({ unit, units = `${unit}s`, defaultLimit, maxLimit, maxOffset }: PagingSpec) {
  return {
    offset: offsetField(unit, maxOffset).default(0),
    // its default and maximum are the schema's own `default` and `maximum`, which clients show; said
    // again in every description they would cost the catalog budget (bench/catalog-size.ts) 30 bytes a tool
    limit: limitField(units, maxLimit).default(defaultLimit).describe(`Most ${units} per page`),
  };
}

/** The input fields of a tool that pages a text by characters. */
export const charPagingInput = pagingInput({ unit: "character", defaultLimit: DEFAULT_CHAR_LIMIT, maxLimit: MAX_CHAR_LIMIT });

/** The output field every paging tool has. */
export const nextOffsetOutput = z.number().nullable().describe("offset of the next page, or null when this was the last");

/** The output fields describing a page of items: where it started, where the next starts, the total when known. */
export const itemPageOutput = {
  offset: z.number().describe("Index of the first returned item"),
  nextOffset: nextOffsetOutput,
  total: z.number().optional().describe("How many there are in all, when known without reading to the end"),
};

/** The output fields describing a page of text (its text goes where each tool puts it). */
export const textPageOutput = {
  totalChars: z.number().describe("Length of the whole text"),
  offset: z.number().describe("Offset of the first returned character"),
  end: z.number().describe("Offset just past the last returned character"),
  remaining: z.number().describe("Characters after this page"),
  nextOffset: nextOffsetOutput,
};

/** The words that get the next page. */
export function nextPageHint(nextOffset: number, tool: string): string {
  return `call ${tool} with offset=${nextOffset}`;
}

export interface TextPage {
  text: string;
  totalChars: number;
  offset: number;
  end: number;
  remaining: number;
  nextOffset: number | null;
}

/** The characters [offset, offset + limit) of a text, and where the next page starts. */
export function pageOfText(text: string, offset: number, limit: number): TextPage {
  const from = Math.min(offset, text.length);
  let end = Math.min(text.length, from + limit);
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
  const more = tool ? `: ${nextPageHint(page.nextOffset ?? page.end, tool)}` : " not shown";
  const next = page.nextOffset === null ? "end of text" : `${page.remaining} more${more}`;
  return `${page.text}\n\n[${where}; ${next}]`;
}

export interface ItemPage<T> {
  items: T[];
  offset: number;
  nextOffset: number | null;
  /** Known when the source was read to its end (always, for an array). */
  total?: number;
}

/** Items [offset, offset + limit) of a list in memory. */
export function pageOfItems<T>(all: readonly T[], offset: number, limit: number): ItemPage<T> {
  const items = all.slice(offset, offset + limit);
  const end = offset + items.length;
  return { items, offset, nextOffset: end < all.length ? end : null, total: all.length };
}

/**
 * Items [offset, offset + limit) of a source read in a stable order (a sorted walk), reading only
 * as far as one item past the page: that one tells whether there is a next page. Reaching the end
 * gives the total for free. Stops early when `signal` aborts (the page so far, no next offset).
 */
export async function pageOfStream<T>(source: AsyncIterable<T>, offset: number, limit: number, signal?: AbortSignal): Promise<ItemPage<T>> {
  const items: T[] = [];
  let seen = 0;
  for await (const item of source) {
    if (signal?.aborted) return { items, offset, nextOffset: null };
    if (seen >= offset + limit) return { items, offset, nextOffset: offset + limit };
    if (seen >= offset) items.push(item);
    seen++;
  }
  return { items, offset, nextOffset: null, total: seen };
}

/** Refuses an offset past the last item, saying how many there are (`units`: plural); an empty list's offset 0 is fine. */
export function assertOffsetInRange(page: ItemPage<unknown>, units: string): void {
  if (page.offset === 0 || page.items.length > 0) return;
  const count = page.total === undefined ? "" : ` (${units}: ${page.total}, offsets 0-${Math.max(0, page.total - 1)})`;
  throw new ToolError(`offset ${page.offset} is past the end${count}. Start again from offset 0.`);
}

/**
 * The line after a page of items saying where it is and how to get the next (`units`: plural,
 * "entries"); a list that fits one page gets none.
 */
export function pageFooter(page: ItemPage<unknown>, units: string, tool: string): string | undefined {
  if (page.offset === 0 && page.nextOffset === null) return undefined;
  const last = page.offset + page.items.length - 1;
  const where = `${units} ${page.offset}-${last}${page.total === undefined ? "" : ` of ${page.total}`}`;
  if (page.nextOffset === null) return `[${where}; that was the last page]`;
  const more = page.total === undefined ? "more follow" : `${page.total - page.nextOffset} more`;
  return `[${where}; ${more}: ${nextPageHint(page.nextOffset, tool)}]`;
}
