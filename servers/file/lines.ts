// Read a window of lines from a file: small files in one read, large ones streamed and paged.
import type { ReadableFile } from "../lib/open-file.js";
import readline from "node:readline";
import { readAt } from "./content.js";

/** Never return more than this many characters of text in one call. */
export const MAX_PAGE_CHARS = 256 * 1024;
export const DEFAULT_LINE_LIMIT = 2000;
export const MAX_LINE_LIMIT = 10_000;

export interface LinePage {
  lines: string[];
  /** 0-based index of the first line returned (line number offset + 1). */
  offset: number;
  /** Index of the line after the page, or null when the page reached the end of the file. */
  nextOffset: number | null;
  /** Known only when the page reached the end of the file. */
  totalLines?: number;
  /** A single line longer than the page budget was cut. */
  truncatedLine: boolean;
  /** The page reached the end and the file ends with a newline (so joined text gets one too). */
  finalNewline: boolean;
}

/** Files up to this size are read in one go and paged in memory; larger ones are streamed. */
export const WHOLE_READ_BYTES = 1024 * 1024;

/** Collects one page from lines fed in order; push returns false once the page is full. */
class PageCollector {
  readonly lines: string[] = [];
  /** Lines fed so far. */
  lineNo = 0;
  chars = 0;
  hasMore = false;
  truncatedLine = false;

  constructor(
    private readonly offset: number,
    private readonly limit: number,
    private readonly charBudget: number,
  ) {}

  push(line: string): boolean {
    this.lineNo++;
    if (this.lineNo <= this.offset) return true;
    if (this.lines.length >= this.limit) {
      this.hasMore = true;
      return false;
    }
    if (this.chars + line.length > this.charBudget) {
      if (this.lines.length === 0) {
        // one enormous line (minified code, a data dump): return its head rather than nothing
        this.lines.push(line.slice(0, this.charBudget));
        this.truncatedLine = true;
      }
      this.hasMore = true;
      return false;
    }
    this.lines.push(line);
    this.chars += line.length + 1;
    return true;
  }

  page(finalNewline: boolean): LinePage {
    const { lines, hasMore, lineNo, truncatedLine, offset } = this;
    return {
      lines,
      offset,
      nextOffset: hasMore ? offset + lines.length : null,
      totalLines: hasMore ? undefined : lineNo,
      truncatedLine,
      finalNewline: !hasMore && lines.length > 0 && finalNewline,
    };
  }
}

/** The same page from text already in memory. */
export function linePageOfText(text: string, offset: number, limit: number, charBudget = MAX_PAGE_CHARS): LinePage {
  const collector = new PageCollector(offset, limit, charBudget);
  const lines = text.split(/\r\n|\n|\r/);
  // like readline: a line break at the very end does not start another line
  if (lines[lines.length - 1] === "") lines.pop();
  for (const line of lines) if (!collector.push(line)) break;
  return collector.page(text.endsWith("\n"));
}

/** A page from an open file (read from its start; the caller owns and closes the handle). */
export async function readLines(handle: ReadableFile, offset: number, limit: number, charBudget = MAX_PAGE_CHARS): Promise<LinePage> {
  const collector = new PageCollector(offset, limit, charBudget);
  const { size } = await handle.stat();
  // one read instead of a stream, readline and a second read for the last byte
  if (size <= WHOLE_READ_BYTES) return linePageOfText((await readAt(handle, size)).toString("utf8"), offset, limit, charBudget);
  const stream = handle.createReadStream({ encoding: "utf8", start: 0, autoClose: false });
  const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
  try {
    for await (const line of rl) if (!collector.push(line)) break;
  } finally {
    rl.close();
    stream.destroy();
  }
  return collector.page(collector.hasMore ? false : (await lastByte(handle)) === 0x0a);
}

async function lastByte(handle: ReadableFile): Promise<number | undefined> {
  const { size } = await handle.stat();
  return size === 0 ? undefined : (await readAt(handle, 1, size - 1))[0];
}

/** The page as text: lines joined, numbered on request, keeping the file's final newline. */
export function pageText(page: LinePage, lineNumbers: boolean): string {
  const body = lineNumbers ? numbered(page.lines, page.offset + 1) : page.lines.join("\n");
  return page.finalNewline ? body + "\n" : body;
}

export function numbered(lines: string[], startLine: number): string {
  const width = String(startLine + lines.length - 1).length;
  return lines.map((l, i) => `${String(startLine + i).padStart(width, " ")}\t${l}`).join("\n");
}
