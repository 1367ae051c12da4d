// Read a window of lines from a file without loading all of it: large files are paged.
import fs from "node:fs";
import readline from "node:readline";

/** Never return more than this many characters of text in one call. */
export const MAX_PAGE_CHARS = 256 * 1024;
export const DEFAULT_LINE_LIMIT = 2000;

export interface LinePage {
  lines: string[];
  /** 1-based number of the first line returned. */
  startLine: number;
  /** True when the file goes on after the last returned line. */
  hasMore: boolean;
  /** Known only when the page reached the end of the file. */
  totalLines?: number;
  /** A single line longer than the page budget was cut. */
  truncatedLine: boolean;
  /** The page reached the end and the file ends with a newline (so joined text gets one too). */
  finalNewline: boolean;
}

export async function readLines(file: string, offset: number, limit: number, maxChars = MAX_PAGE_CHARS): Promise<LinePage> {
  const stream = fs.createReadStream(file, { encoding: "utf8" });
  const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
  const lines: string[] = [];
  let lineNo = 0;
  let chars = 0;
  let hasMore = false;
  let truncatedLine = false;
  try {
    for await (const line of rl) {
      lineNo++;
      if (lineNo < offset) continue;
      if (lines.length >= limit) {
        hasMore = true;
        break;
      }
      if (chars + line.length > maxChars) {
        if (lines.length === 0) {
          // one enormous line (minified code, a data dump): return its head rather than nothing
          lines.push(line.slice(0, maxChars));
          truncatedLine = true;
        }
        hasMore = true;
        break;
      }
      lines.push(line);
      chars += line.length + 1;
    }
  } finally {
    rl.close();
    stream.destroy();
  }
  const finalNewline = !hasMore && lines.length > 0 && (await lastByte(file)) === 0x0a;
  return { lines, startLine: offset, hasMore, totalLines: hasMore ? undefined : lineNo, truncatedLine, finalNewline };
}

async function lastByte(file: string): Promise<number | undefined> {
  const handle = await fs.promises.open(file, "r");
  try {
    const { size } = await handle.stat();
    if (size === 0) return undefined;
    const buf = Buffer.alloc(1);
    await handle.read(buf, 0, 1, size - 1);
    return buf[0];
  } finally {
    await handle.close();
  }
}

/** The page as text: lines joined, numbered on request, keeping the file's final newline. */
export function pageText(page: LinePage, lineNumbers: boolean): string {
  const body = lineNumbers ? numbered(page.lines, page.startLine) : page.lines.join("\n");
  return page.finalNewline ? body + "\n" : body;
}

export function numbered(lines: string[], startLine: number): string {
  const width = String(startLine + lines.length - 1).length;
  return lines.map((l, i) => `${String(startLine + i).padStart(width, " ")}\t${l}`).join("\n");
}
