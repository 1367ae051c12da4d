// find (glob on names) and grep (regex on contents).
import fsp from "node:fs/promises";
import picomatch from "picomatch";
import { z } from "zod";
import { toolName } from "../../lib/names.js";
import { assertOffsetInRange, itemPageOutput, pageFooter, pageOfStream, pagingInput, type ItemPage } from "../../lib/paging.js";
import { defineTool, reply, ToolError, type ToolContext } from "../../lib/tool.js";
import { looksLikeText, readAt } from "../content.js";
import { rel, resolveExisting, withOpened } from "../paths.js";
import { escapeRegExp } from "../replace.js";
import { DEFAULT_EXCLUDES, walk, type WalkEntry } from "../walk.js";

const MAX_GREP_FILE_BYTES = 10 * 1024 * 1024;

const common = {
  path: z.string().default(".").describe("Folder"),
  exclude: z.array(z.string()).default(DEFAULT_EXCLUDES).describe("Globs of names or paths to skip"),
  hidden: z.boolean().default(false).describe("Include dotfiles"),
};

/** Globs with a slash match the path relative to the search folder, others just the name. */
function globMatcher(glob: string): (e: WalkEntry) => boolean {
  const match = picomatch(glob, { dot: true });
  return glob.includes("/") ? (e) => match(e.relative) : (e) => match(e.name);
}

const find = defineTool({
  name: "find",
  title: "Find files by name",
  description: "Find files and folders whose name matches a glob (e.g. '*.ts', 'test_*'); a glob with '/' matches the relative path ('src/**/*.ts').",
  input: {
    pattern: z.string().min(1).describe("Glob: * ? [abc] {a,b} and ** across folders"),
    ...common,
    type: z.enum(["any", "file", "directory"]).default("any"),
    ...pagingInput({ unit: "result", defaultLimit: 200, maxLimit: 10_000 }),
  },
  output: { matches: z.array(z.object({ path: z.string(), type: z.string() })), ...itemPageOutput },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ pattern, path: userPath, exclude, hidden, type, offset, limit }, ctx) {
    const dir = resolveExisting(ctx, userPath);
    const base = rel(ctx, dir);
    const isMatch = globMatcher(pattern);
    async function* found() {
      for await (const e of walk(dir, { workspace: ctx.workspace, hidden, exclude })) {
        if ((type === "any" || e.type === type) && isMatch(e)) yield { path: base === "." ? e.relative : `${base}/${e.relative}`, type: e.type };
      }
    }
    // the walk goes in name order, so offset=nextOffset continues exactly where this page ended
    const page = await pageOfStream(found(), offset, limit, ctx.signal);
    assertOffsetInRange(page, "results");
    const lines = page.items.map((m) => m.path + (m.type === "directory" ? "/" : ""));
    const footer = pageFooter(page, "results", toolName("find"));
    if (footer) lines.push(footer);
    const { items, ...position } = page;
    return reply.data(items.length ? lines.join("\n") : `No names match '${pattern}' under ${base}.`, { matches: items, ...position });
  },
});

interface GrepMatch {
  path: string;
  line: number;
  text: string;
  before: string[];
  after: string[];
}

const grep = defineTool({
  name: "grep",
  title: "Search file contents",
  description: "Search file contents with a regular expression (JavaScript syntax). Binary and very large files are skipped.",
  input: {
    pattern: z.string().min(1).describe("Regex, or plain text with literal: true"),
    ...common,
    include: z.string().optional().describe("Only files matching this glob"),
    ignoreCase: z.boolean().default(false),
    literal: z.boolean().default(false),
    context: z.number().int().min(0).max(20).default(0).describe("Lines around each match"),
    ...pagingInput({ unit: "match", units: "matches", defaultLimit: 100, maxLimit: 5000 }),
  },
  output: {
    matches: z.array(z.object({ path: z.string(), line: z.number(), text: z.string(), before: z.array(z.string()), after: z.array(z.string()) })),
    filesSearched: z.number().describe("Text files read for this page"),
    ...itemPageOutput,
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ pattern, path: userPath, exclude, hidden, include, ignoreCase, literal, context, offset, limit }, ctx) {
    let re: RegExp;
    try {
      re = new RegExp(literal ? escapeRegExp(pattern) : pattern, ignoreCase ? "i" : "");
    } catch (err) {
      throw new ToolError(`Invalid regular expression '${pattern}': ${(err as Error).message}. Use JavaScript regex syntax, or literal: true.`);
    }
    const start = resolveExisting(ctx, userPath);
    const isIncluded = include ? globMatcher(include) : () => true;
    const files: string[] = [];
    if ((await fsp.stat(start)).isFile()) files.push(start);
    else {
      for await (const e of walk(start, { workspace: ctx.workspace, hidden, exclude })) {
        if (e.type === "file" && isIncluded(e)) files.push(e.absolute);
      }
    }
    const search = { files, re, context, searched: 0 };
    // files in walk order, lines in file order: offset=nextOffset continues where this page ended
    const page = await pageOfStream(grepMatches(ctx, search), offset, limit, ctx.signal);
    assertOffsetInRange(page, "matches");
    const { items, ...position } = page;
    return reply.data(formatGrep(page, pattern, search.searched), { matches: items, filesSearched: search.searched, ...position });
  },
});

interface GrepSearch {
  files: string[];
  re: RegExp;
  context: number;
  /** Text files read so far. */
  searched: number;
}

/** Every matching line of the files in order, read one file at a time as the page needs them. */
async function* grepMatches(ctx: ToolContext, search: GrepSearch): AsyncGenerator<GrepMatch> {
  const { re, context } = search;
  for (const file of search.files) {
    // each file through a verified descriptor; hard links and files swapped for links are skipped
    const buf = await withOpened(ctx, file, async ({ handle, stat }) =>
      stat.isFile() && stat.size <= MAX_GREP_FILE_BYTES ? readAt(handle, stat.size) : null,
    ).catch(() => null);
    if (!buf || !looksLikeText(buf)) continue;
    search.searched++;
    const lines = buf.toString("utf8").split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
      if (!re.test(lines[i])) continue;
      yield {
        path: rel(ctx, file),
        line: i + 1,
        text: lines[i],
        before: lines.slice(Math.max(0, i - context), i),
        after: lines.slice(i + 1, i + 1 + context),
      };
    }
  }
}

/** grep -n style: 'path:line:text' for matches, 'path-line-text' for context. */
function formatGrep(page: ItemPage<GrepMatch>, pattern: string, searched: number): string {
  if (page.items.length === 0) return `No matches for /${pattern}/ in ${searched} file(s).`;
  const out: string[] = [];
  for (const m of page.items) {
    const ctxLines = m.before.length + m.after.length > 0;
    if (ctxLines && out.length) out.push("--");
    m.before.forEach((t, k) => out.push(`${m.path}-${m.line - m.before.length + k}-${t}`));
    out.push(`${m.path}:${m.line}:${m.text}`);
    m.after.forEach((t, k) => out.push(`${m.path}-${m.line + 1 + k}-${t}`));
  }
  const footer = pageFooter(page, "matches", toolName("grep"));
  if (footer) out.push(footer);
  return out.join("\n");
}

export default [find, grep];
