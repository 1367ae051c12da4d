// list and tree: what is in a folder.
import fsp from "node:fs/promises";
import { z } from "zod";
import { toolName } from "../../lib/names.js";
import { fdPath, lstatAt, withDir } from "../../lib/safe-fs.js";
import { assertOffsetInRange, itemPageOutput, pageFooter, pageOfItems, pageOfStream, pagingInput } from "../../lib/paging.js";
import { defineTool, reply, ToolError } from "../../lib/tool.js";
import { formatSize, typeOf } from "../content.js";
import { RESERVED_DIR, rel, resolveExisting } from "../paths.js";
import { DEFAULT_EXCLUDES, walk, type WalkEntry } from "../walk.js";
import { IN_PLACE_CALLS_PER_TURN } from "../../lib/open-file.js";
import { nextTurn } from "../../lib/next-turn.js";

// the folder the tool lists (its title says so), relative to the workspace like every path of this server
const dirParam = z.string().default(".");
const entryType = z.enum(["file", "directory", "symlink", "other"]);

async function assertDirectory(dir: string, userPath: string): Promise<void> {
  if (!(await fsp.stat(dir)).isDirectory()) throw new ToolError(`'${userPath}' is not a folder; use ${toolName("info")} or ${toolName("read")} for a file.`);
}

const list = defineTool({
  name: "list",
  title: "List a folder",
  description: "List one folder's entries with type, size and modification time.",
  input: {
    path: dirParam,
    hidden: z.boolean().default(false).describe("Include dotfiles"),
    sort: z.enum(["name", "size", "mtime", "type"]).default("name").describe("type: folders first"),
    reverse: z.boolean().default(false),
    ...pagingInput({ unit: "entry", units: "entries", defaultLimit: 1000, maxLimit: 10_000 }),
  },
  output: {
    path: z.string(),
    entries: z.array(z.object({ name: z.string(), type: entryType, size: z.number(), mtime: z.string() })),
    ...itemPageOutput,
    total: z.number().describe("Entries in the folder"),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ path: userPath, hidden, sort, reverse, offset, limit }, ctx) {
    const dir = resolveExisting(ctx, userPath);
    await assertDirectory(dir, userPath);
    // listed through a descriptor opened from the root without following links
    const entries = await withDir(ctx.workspace, dir, { shown: userPath }, async (handle) => {
      const names = (await fsp.readdir(fdPath(handle))).filter((n) => (hidden || !n.startsWith(".")) && !(dir === ctx.workspace && n === RESERVED_DIR));
      const found = [];
      for (const [i, name] of names.entries()) {
        if (i % IN_PLACE_CALLS_PER_TURN === IN_PLACE_CALLS_PER_TURN - 1) await nextTurn();
        const st = lstatAt(handle, name);
        if (st) found.push({ name, type: typeOf(st), size: st.size, mtime: st.mtime.toISOString() });
      }
      return found;
    });
    const rank = (t: string) => (t === "directory" ? 0 : 1);
    const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    entries.sort((a, b) => {
      const primary = sort === "size" ? a.size - b.size : sort === "mtime" ? a.mtime.localeCompare(b.mtime) : sort === "type" ? rank(a.type) - rank(b.type) : 0;
      return primary || byName(a, b);
    });
    if (reverse) entries.reverse();
    const page = pageOfItems(entries, offset, limit);
    assertOffsetInRange(page, "entries");
    const lines = page.items.map((e) => {
      const dir = e.type === "directory";
      return `${dir ? "d" : e.type === "symlink" ? "l" : "-"} ${formatSize(e.size).padStart(10)}  ${e.mtime}  ${e.name}${dir ? "/" : ""}`;
    });
    const footer = pageFooter(page, "entries", toolName("list"));
    if (footer) lines.push(footer);
    const where = rel(ctx, dir);
    const { items, ...position } = page;
    return reply.data(lines.length ? `${where}:\n${lines.join("\n")}` : `${where}: empty`, { path: where, entries: items, ...position, total: entries.length });
  },
});

const tree = defineTool({
  name: "tree",
  title: "Show a folder tree",
  description: "Show a folder's nested structure down to a depth, skipping excluded names.",
  input: {
    path: dirParam,
    depth: z.number().int().min(1).max(20).default(3).describe("Levels (1: the folder's own entries)"),
    exclude: z.array(z.string()).default(DEFAULT_EXCLUDES).describe("Globs of names or paths to skip"),
    hidden: z.boolean().default(false).describe("Include dotfiles"),
    ...pagingInput({ unit: "entry", units: "entries", defaultLimit: 500, maxLimit: 10_000 }),
  },
  output: {
    path: z.string(),
    entries: z.array(z.object({ path: z.string(), type: entryType, depth: z.number() })),
    ...itemPageOutput,
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ path: userPath, depth, exclude, hidden, offset, limit }, ctx) {
    const dir = resolveExisting(ctx, userPath);
    await assertDirectory(dir, userPath);
    // the walk goes in name order, so the same offset lands on the same entry while nothing changes
    const page = await pageOfStream(walk(dir, { workspace: ctx.workspace, hidden, exclude, maxDepth: depth }), offset, limit, ctx.signal);
    assertOffsetInRange(page, "entries");
    const where = rel(ctx, dir);
    // a later page starts mid-tree: its first line gives the whole path, so the entries under it have a parent
    const shownName = (e: WalkEntry, i: number) => (i === 0 && offset > 0 ? e.relative : e.name);
    const lines = page.items.map((e, i) => `${"  ".repeat(e.depth - 1)}${shownName(e, i)}${e.type === "directory" ? "/" : e.type === "symlink" ? "@" : ""}`);
    const footer = pageFooter(page, "entries", toolName("tree"));
    if (footer) lines.push(footer);
    const { items, ...position } = page;
    const entries = items.map((e) => ({ path: e.relative, type: e.type, depth: e.depth }));
    return reply.data(`${where}/\n${lines.join("\n")}`, { path: where, entries, ...position });
  },
});

export default [list, tree];
