// move, copy, delete, mkdir and info: managing entries rather than their content.
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { defineTool, ToolError } from "../../lib/tool.js";
import { isInside } from "../../lib/workspace.js";
import { formatSize, kindOf, mimeTypeOf, statOrNull, typeOf } from "../content.js";
import { assertNotRoot, assertWritable, rel, resolveEntry, resolveExisting, resolveTarget } from "../paths.js";

const pathParam = (what: string) => z.string().describe(what);
const overwriteParam = z.boolean().default(false).describe("Replace an existing destination file.");

/** A destination may replace a file only when asked, and never a folder or the source's own subtree. */
function checkDestination(source: string, dest: string, overwrite: boolean, userDest: string): void {
  if (dest === source) throw new ToolError("Source and destination are the same path.");
  if (isInside(source, dest)) throw new ToolError(`Cannot put '${userDest}' inside the folder being moved or copied.`);
  const existing = statOrNull(dest);
  if (!existing) return;
  if (existing.isDirectory()) throw new ToolError(`Destination '${userDest}' is an existing folder; give the full new path, e.g. '${path.posix.join(userDest, path.basename(source))}'.`);
  if (!overwrite) throw new ToolError(`Destination '${userDest}' already exists; pass overwrite: true to replace it.`);
}

export const move = defineTool({
  name: "move",
  title: "Move or rename",
  description: "Move or rename a file, folder or symlink (a symlink moves itself, not its target). Missing parent folders of the destination are created.",
  input: { source: pathParam("What to move"), destination: pathParam("Its new path"), overwrite: overwriteParam },
  output: { source: z.string(), destination: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run({ source, destination, overwrite }, ctx) {
    assertWritable("move");
    const src = resolveEntry(ctx, source);
    assertNotRoot(ctx, src, "move");
    const dst = resolveTarget(ctx, destination);
    checkDestination(src, dst, overwrite, destination);
    await fsp.mkdir(path.dirname(dst), { recursive: true });
    try {
      await fsp.rename(src, dst);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
      // another filesystem mounted inside the workspace: copy, then remove the original
      await fsp.cp(src, dst, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true, force: overwrite });
      await fsp.rm(src, { recursive: true, force: true });
    }
    const out = { source: rel(ctx, src), destination: rel(ctx, dst) };
    return { content: [{ type: "text", text: `Moved ${out.source} to ${out.destination}.` }], structuredContent: out };
  },
});

export const copy = defineTool({
  name: "copy",
  title: "Copy",
  description: "Copy a file, or a folder with everything in it, to a new path (symlinks inside a folder are copied as links).",
  input: { source: pathParam("What to copy"), destination: pathParam("Path of the copy"), overwrite: overwriteParam },
  output: { source: z.string(), destination: z.string(), type: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run({ source, destination, overwrite }, ctx) {
    assertWritable("copy");
    const src = resolveExisting(ctx, source);
    assertNotRoot(ctx, src, "copy");
    const dst = resolveTarget(ctx, destination);
    checkDestination(src, dst, overwrite, destination);
    await fsp.mkdir(path.dirname(dst), { recursive: true });
    const st = await fsp.stat(src);
    if (st.isDirectory()) await fsp.cp(src, dst, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true, errorOnExist: true, force: false });
    else await fsp.copyFile(src, dst, overwrite ? 0 : fs.constants.COPYFILE_EXCL);
    const out = { source: rel(ctx, src), destination: rel(ctx, dst), type: st.isDirectory() ? "directory" : "file" };
    return { content: [{ type: "text", text: `Copied ${out.type} ${out.source} to ${out.destination}.` }], structuredContent: out };
  },
});

export const remove = defineTool({
  name: "delete",
  title: "Delete",
  description: "Delete a file, symlink (the link, not its target) or empty folder; a folder with content only with recursive: true.",
  input: {
    path: pathParam("What to delete"),
    recursive: z.boolean().default(false).describe("Delete a folder and everything in it."),
  },
  output: { path: z.string(), type: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ path: userPath, recursive }, ctx) {
    assertWritable("delete");
    const entry = resolveEntry(ctx, userPath);
    assertNotRoot(ctx, entry, "delete");
    const st = await fsp.lstat(entry);
    if (st.isDirectory()) {
      const children = await fsp.readdir(entry);
      if (children.length > 0 && !recursive) {
        throw new ToolError(`Folder '${userPath}' is not empty (${children.length} entries); pass recursive: true to delete it with its content.`);
      }
      await fsp.rm(entry, { recursive: true });
    } else {
      await fsp.unlink(entry);
    }
    const out = { path: rel(ctx, entry), type: typeOf(st) };
    return { content: [{ type: "text", text: `Deleted ${out.type} ${out.path}.` }], structuredContent: out };
  },
});

export const mkdir = defineTool({
  name: "mkdir",
  title: "Create a folder",
  description: "Create a folder (and its missing parents unless parents is false). An existing folder is fine.",
  input: {
    path: pathParam("Folder to create"),
    parents: z.boolean().default(true).describe("Create missing parent folders too."),
  },
  output: { path: z.string(), created: z.boolean() },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ path: userPath, parents }, ctx) {
    assertWritable("mkdir");
    const dir = resolveTarget(ctx, userPath);
    const existing = statOrNull(dir);
    if (existing && !existing.isDirectory()) throw new ToolError(`'${userPath}' exists and is not a folder.`);
    if (!existing) {
      if (!parents && !statOrNull(path.dirname(dir))) throw new ToolError(`Parent of '${userPath}' does not exist; pass parents: true.`);
      await fsp.mkdir(dir, { recursive: parents });
    }
    const out = { path: rel(ctx, dir), created: !existing };
    return { content: [{ type: "text", text: existing ? `Folder ${out.path} already exists.` : `Created folder ${out.path}.` }], structuredContent: out };
  },
});

export const info = defineTool({
  name: "info",
  title: "Path details",
  description: "Details of a path: type, size, mode, times, MIME type; for a symlink also where it points.",
  input: { path: pathParam("Path to describe") },
  output: {
    path: z.string(),
    type: z.enum(["file", "directory", "symlink", "other"]),
    size: z.number(),
    mode: z.string().describe("Permission bits in octal, e.g. '644'."),
    mtime: z.string(),
    ctime: z.string(),
    atime: z.string(),
    birthtime: z.string(),
    mimeType: z.string().optional(),
    kind: z.enum(["text", "image", "binary"]).optional(),
    target: z.string().optional().describe("For a symlink: its target relative to the workspace, or why it cannot be followed."),
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run({ path: userPath }, ctx) {
    const entry = resolveEntry(ctx, userPath);
    const st = await fsp.lstat(entry);
    let target: string | undefined;
    if (st.isSymbolicLink()) {
      try {
        target = rel(ctx, resolveExisting(ctx, userPath));
      } catch (err) {
        target = `(not followed: ${(err as Error).message})`;
      }
    }
    const kind = st.isFile() ? await kindOf(entry) : undefined;
    const out = {
      path: rel(ctx, entry),
      type: typeOf(st),
      size: st.size,
      mode: (st.mode & 0o7777).toString(8),
      mtime: st.mtime.toISOString(),
      ctime: st.ctime.toISOString(),
      atime: st.atime.toISOString(),
      birthtime: st.birthtime.toISOString(),
      mimeType: kind ? mimeTypeOf(entry, kind === "text") : undefined,
      kind,
      target,
    };
    const text = [
      `${out.path}: ${out.type}${kind ? ` (${kind}, ${out.mimeType})` : ""}, ${formatSize(out.size)}, mode ${out.mode}`,
      `modified ${out.mtime}`,
      ...(target ? [`-> ${target}`] : []),
    ].join("\n");
    return { content: [{ type: "text", text }], structuredContent: out };
  },
});
