// changes: the workspace's recent changes for a model whose client has no resource subscriptions.
import picomatch from "picomatch";
import { z } from "zod";
import { toolName } from "../../lib/names.js";
import { defineTool, reply, ToolError } from "../../lib/tool.js";
import { rel, resolveTarget } from "../paths.js";
import { CursorError, type Change } from "../watch/ring.js";
import { workspaceChanges } from "../watch/subscriptions.js";
import { SKIPPED_NAMES } from "../watch/watcher.js";

/** Within `folder` ("." the whole workspace), and matching `glob`: with a slash against the path below the folder, else the name. */
function matcher(folder: string, glob: string | undefined): (c: Change) => boolean {
  const match = glob === undefined ? () => true : picomatch(glob, { dot: true });
  const below = (p: string) =>
    folder === "." ? p : p.startsWith(folder + "/") ? p.slice(folder.length + 1) : p === folder ? p.slice(p.lastIndexOf("/") + 1) : undefined;
  return (c) => {
    const inner = below(c.path);
    if (inner === undefined) return false;
    return glob?.includes("/") ? match(inner) : match(inner.slice(inner.lastIndexOf("/") + 1));
  };
}

const changes = defineTool({
  name: "changes",
  title: "Recent workspace changes",
  description: () =>
    "Files added, changed or removed in the workspace by anything (tools, shell commands, code, downloads), for clients without resource " +
    "subscriptions. The first call starts watching and returns a cursor; pass it back to get what changed since. `missed` is true when " +
    `changes since the cursor were dropped (the feed keeps only the most recent ones, and nothing is recorded while nobody reads it for a while). ` +
    `Folders ${SKIPPED_NAMES.join(", ")} are not watched. To read a changed file use ${toolName("read")}.`,
  input: {
    path: z.string().default(".").describe("Only changes at or below this file or folder of the workspace (default: all of it)."),
    glob: z.string().min(1).optional().describe("Only paths matching this glob ('*.py'; with '/' it matches the path below `path`, e.g. 'src/**/*.ts')."),
    cursor: z.string().optional().describe("The cursor a previous call returned: only changes after it. Without it, what the feed holds now."),
    limit: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(200)
      .describe("At most this many changes; `more` says whether there are others after the returned cursor."),
  },
  output: {
    changes: z.array(z.object({ path: z.string(), kind: z.enum(["added", "changed", "removed"]), at: z.string() })),
    cursor: z.string().describe("Pass back to get the changes after these."),
    missed: z.boolean().describe("Changes since the given cursor were dropped: what changed must be looked at directly."),
    more: z.boolean(),
    notes: z.array(z.string()).optional(),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run({ path: userPath, glob, cursor, limit }, ctx) {
    const folder = rel(ctx, resolveTarget(ctx, userPath));
    const feed = workspaceChanges();
    const wasWatching = feed.watching;
    await feed.read(ctx.session);
    let page;
    try {
      page = feed.ring.since(cursor, matcher(folder, glob), limit);
    } catch (err) {
      if (err instanceof CursorError) throw new ToolError(err.message);
      throw err;
    }
    const notes: string[] = [];
    if (!wasWatching) notes.push("Watching started now: changes from here on are recorded; call again with the cursor.");
    if (page.missed)
      notes.push("Some changes since the cursor were dropped (too many at once, or nobody was reading): check the files you care about directly.");
    if (feed.cappedNote) notes.push(feed.cappedNote);
    const lines = page.changes.map((c) => `${c.at}  ${c.kind.padEnd(7)}  ${c.path}`);
    if (page.more) lines.push(`… more changes: call ${toolName("changes")} again with cursor ${page.cursor}.`);
    const text = [...(lines.length ? lines : ["No changes."]), ...notes, `cursor: ${page.cursor}`].join("\n");
    return reply.data(text, { ...page, ...(notes.length ? { notes } : {}) });
  },
});

export default [changes];
