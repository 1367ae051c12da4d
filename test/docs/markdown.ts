// Reading the documentation's Markdown: its fenced code blocks (with the example marker written
// right before each) and the anchors its headings get on GitHub.

export interface CodeBlock {
  /** The file it stands in (relative to the project's root) and the line of its opening fence. */
  file: string;
  line: number;
  /** The fence's language: sh, json, jsonc, … ("" when none). */
  language: string;
  code: string;
  /** What the `<!-- example: … -->` line right before the fence says, if there is one. */
  marker?: string;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/;
const MARKER = /^\s*<!--\s*example:\s*(.*?)\s*-->\s*$/;

/** The fenced code blocks of a Markdown text. */
export function codeBlocks(file: string, text: string): CodeBlock[] {
  const lines = text.split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, language] = open;
    let end = i + 1;
    while (end < lines.length && !lines[end].trimStart().startsWith(fence)) end++;
    const code = lines
      .slice(i + 1, end)
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
      .join("\n");
    // the marker line sits right before the fence (blank lines between are allowed)
    let before = i - 1;
    while (before >= 0 && lines[before].trim() === "") before--;
    const marker = before >= 0 ? MARKER.exec(lines[before])?.[1] : undefined;
    blocks.push({ file, line: i + 1, language: language.toLowerCase(), code, ...(marker !== undefined ? { marker } : {}) });
    i = end;
  }
  return blocks;
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor of a Markdown text: its headings' slugs (repeats numbered as GitHub does), outside code blocks. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of text.split("\n")) {
    const open = FENCE.exec(line);
    if (open) {
      if (!fence) fence = open[2];
      else if (line.trimStart().startsWith(fence)) fence = undefined;
      continue;
    }
    if (fence) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}
