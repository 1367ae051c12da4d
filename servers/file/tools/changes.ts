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
  description:
    "What anything (tools, shell, code, downloads) added, changed or removed in the workspace lately, for clients without resource " +
    "subscriptions. The first call starts watching; pass its `next` as `since` for what changed after (`missed`: some were dropped).",
  input: {
    path: z.string().default(".").describe("Only at or below this path"),
    glob: z.string().min(1).optional().describe("Only matching paths ('*.py'; with '/', the path below `path`)"),
    since: z.string().optional().describe("An earlier call's `next`"),
    limit: z.number().int().min(1).max(1000).default(200).describe("At most this many; `more` if there are others"),
  },
  output: {
    changes: z.array(z.object({ path: z.string(), kind: z.enum(["added", "changed", "removed"]), at: z.string() })),
    next: z.string(),
    missed: z.boolean(),
    more: z.boolean(),
    notes: z.array(z.string()).optional(),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ path: userPath, glob, since, limit }, ctx) {
    const folder = rel(ctx, resolveTarget(ctx, userPath));
    const feed = workspaceChanges();
    const wasWatching = feed.watching;
    await feed.read(ctx.session);
    let page;
    try {
      page = feed.ring.since(since, matcher(folder, glob), limit);
    } catch (err) {
      if (err instanceof CursorError) throw new ToolError(err.message);
      throw err;
    }
    const notes: string[] = [];
    if (!wasWatching) notes.push("Watching started now: changes from here on are recorded; call again with `since` set to `next`.");
    if (page.missed)
      notes.push(
        "Some changes since then were dropped (too many at once, or nobody read this feed for a while): look at the files you care about " +
          `directly. Folders ${SKIPPED_NAMES.join(", ")} are never watched.`,
      );
    if (feed.cappedNote) notes.push(feed.cappedNote);
    const lines = page.changes.map((c) => `${c.at}  ${c.kind.padEnd(7)}  ${c.path}`);
    if (page.more) lines.push(`… more changes: call ${toolName("changes")} again with since "${page.next}".`);
    const text = [...(lines.length ? lines : ["No changes."]), ...notes, `next: ${page.next}`].join("\n");
    return reply.data(text, { ...page, ...(notes.length ? { notes } : {}) });
  },
});

export default [changes];
