// write: create or replace (or append to) a file, atomically, creating parent folders.
import path from "node:path";
import { z } from "zod";
import { toolName } from "../../lib/names.js";
import { defineTool, reply, ToolError } from "../../lib/tool.js";
import { atomicWriteAt } from "../../lib/atomic-write.js";
import { formatSize, statOrNull } from "../content.js";
import { assertWritable, rel, resolveTarget, withParent } from "../paths.js";

const write = defineTool({
  name: "write",
  title: "Write a file",
  description: "Create, replace or append to a file (atomically: a crash never leaves half a file). An existing file keeps its mode.",
  input: {
    path: z.string(),
    content: z.string().describe("Text, or base64 with encoding 'base64'"),
    encoding: z.enum(["utf8", "base64"]).default("utf8"),
    append: z.boolean().default(false).describe("Add to the end instead of replacing"),
    createParents: z.boolean().default(true).describe("Create missing parent folders"),
  },
  output: { path: z.string(), bytesWritten: z.number(), size: z.number(), created: z.boolean() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run({ path: userPath, content, encoding, append, createParents }, ctx) {
    assertWritable("write");
    const target = resolveTarget(ctx, userPath);
    const existing = statOrNull(target);
    if (existing?.isDirectory()) throw new ToolError(`'${userPath}' is a directory; give a file path.`);
    if (existing && !existing.isFile()) throw new ToolError(`'${userPath}' exists and is not a regular file.`);
    if (encoding === "base64" && !/^[A-Za-z0-9+/]*={0,2}$/.test(content.replace(/\s+/g, ""))) {
      throw new ToolError("content is not valid base64 (allowed: A-Z a-z 0-9 + / and = padding).");
    }
    const data = Buffer.from(content, encoding === "base64" ? "base64" : "utf8");
    const parentStat = statOrNull(path.dirname(target));
    if (!parentStat && !createParents)
      throw new ToolError(`Parent folder of '${userPath}' does not exist; pass createParents: true or create it with ${toolName("mkdir")}.`);
    if (parentStat && !parentStat.isDirectory()) throw new ToolError(`Parent of '${userPath}' is not a folder.`);
    // the folder is opened from the workspace root without following links, and the file is
    // replaced by name inside it: a link swapped in after the check is replaced, not written through
    const size = await withParent(ctx, target, { create: createParents }, (dir, name) =>
      atomicWriteAt(dir, name, data, {
        append,
        shown: userPath,
        onChunk: (done, total) => ctx.progress(done, total, `writing ${rel(ctx, target)}`),
      }),
    );
    const shown = rel(ctx, target);
    const verb = existing ? (append ? "Appended" : "Replaced") : "Created";
    return reply.data(`${verb} ${shown}: wrote ${formatSize(data.length)}, file is now ${formatSize(size)}.`, {
      path: shown,
      bytesWritten: data.length,
      size,
      created: !existing,
    });
  },
});

export default [write];
