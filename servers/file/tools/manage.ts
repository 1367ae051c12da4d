// move, copy, delete, mkdir and info: managing entries rather than their content.
import type fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { defineTool, reply, ToolError } from "../../lib/tool.js";
import { isInside } from "../../lib/workspace.js";
import { fdPath, lstatAt, openFileAt, withDir, withSubdir } from "../../lib/safe-fs.js";
import { atomicWriteAt } from "../../lib/atomic-write.js";
import { mimeTypeOf } from "../../lib/mime.js";
import { formatSize, kindOf, statOrNull, typeOf, type FileKind } from "../content.js";
import { assertNotRoot, assertWritable, rel, resolveEntry, resolveExisting, resolveTarget, withOpened, withParent } from "../paths.js";
import { copyDirAt, copyEntryAt, newCounts, removeAt } from "../tree.js";
import type { OpenFile } from "../../lib/open-file.js";

const pathParam = (what: string) => z.string().describe(what);
const overwriteParam = z.boolean().default(false).describe("Replace an existing file");

/** A destination may replace a file only when asked, and never a folder or the source's own subtree. */
function checkDestination(source: string, dest: string, overwrite: boolean, userDest: string): void {
  if (dest === source) throw new ToolError("Source and destination are the same path.");
  if (isInside(source, dest)) throw new ToolError(`Cannot put '${userDest}' inside the folder being moved or copied.`);
  const existing = statOrNull(dest);
  if (!existing) return;
  if (existing.isDirectory())
    throw new ToolError(`Destination '${userDest}' is an existing folder; give the full new path, e.g. '${path.posix.join(userDest, path.basename(source))}'.`);
  if (!overwrite) throw new ToolError(`Destination '${userDest}' already exists; pass overwrite: true to replace it.`);
}

const move = defineTool({
  name: "move",
  title: "Move or rename",
  description: "Move or rename a file, folder or symlink (the link, not its target), creating missing parent folders.",
  input: { source: pathParam("What to move"), destination: pathParam("Its new path"), overwrite: overwriteParam },
  output: { source: z.string(), destination: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ source, destination, overwrite }, ctx) {
    assertWritable("move");
    const src = resolveEntry(ctx, source);
    assertNotRoot(ctx, src, "move");
    const dst = resolveTarget(ctx, destination);
    checkDestination(src, dst, overwrite, destination);
    // both ends by (open folder, name): a folder on either path swapped for a link meanwhile is refused
    await withParent(ctx, src, {}, (from, srcName) =>
      withParent(ctx, dst, { create: true }, async (to, dstName) => {
        try {
          await fsp.rename(fdPath(from, srcName), fdPath(to, dstName));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
          // another filesystem mounted inside the workspace: copy, then remove the original
          if (overwrite) await removeAt(to, dstName);
          await copyEntryAt(from, srcName, to, dstName, newCounts(), destination);
          await removeAt(from, srcName);
        }
      }),
    );
    const out = { source: rel(ctx, src), destination: rel(ctx, dst) };
    return reply.data(`Moved ${out.source} to ${out.destination}.`, out);
  },
});

const copy = defineTool({
  name: "copy",
  title: "Copy",
  description: "Copy a file, or a folder with its content (symlinks in it are copied as links).",
  input: { source: pathParam("What to copy"), destination: pathParam("Path of the copy"), overwrite: overwriteParam },
  output: { source: z.string(), destination: z.string(), type: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ source, destination, overwrite }, ctx) {
    assertWritable("copy");
    const src = resolveExisting(ctx, source);
    assertNotRoot(ctx, src, "copy");
    const dst = resolveTarget(ctx, destination);
    checkDestination(src, dst, overwrite, destination);
    const counts = newCounts();
    const isDir = (await fsp.stat(src)).isDirectory();
    await withParent(ctx, dst, { create: true }, async (to, dstName) => {
      if (isDir) {
        // the folder and everything in it are read through open folders, never through a link
        await withParent(ctx, src, {}, (parent, srcName) => withSubdir(parent, srcName, (from) => copyDirAt(from, to, dstName, counts, destination)));
      } else {
        // read through the verified descriptor (hard links refused), written by name in the opened folder
        await withOpened(ctx, source, (file) => {
          // a FIFO, socket or device has no content to copy (a folder's copy skips them too)
          if (!file.stat.isFile()) throw new ToolError(`'${source}' is not a regular file or a folder; only those are copied.`);
          return atomicWriteAt(to, dstName, file, { exclusive: !overwrite, mode: file.stat.mode & 0o7777, shown: destination });
        });
      }
    });
    const out = { source: rel(ctx, src), destination: rel(ctx, dst), type: isDir ? "directory" : "file" };
    const skipped = counts.skipped.length ? `\nNot copied (special files, hard links): ${counts.skipped.join(", ")}` : "";
    return reply.data(`Copied ${out.type} ${out.source} to ${out.destination}.${skipped}`, out);
  },
});

const remove = defineTool({
  name: "delete",
  title: "Delete",
  description: "Delete a file, symlink (the link, not its target) or empty folder; a folder with content only with recursive: true.",
  input: {
    path: pathParam("What to delete"),
    recursive: z.boolean().default(false).describe("Delete a folder and everything in it"),
  },
  output: { path: z.string(), type: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ path: userPath, recursive }, ctx) {
    assertWritable("delete");
    const entry = resolveEntry(ctx, userPath);
    assertNotRoot(ctx, entry, "delete");
    const st = await withParent(ctx, entry, {}, async (dir, name) => {
      const st = lstatAt(dir, name);
      if (!st) throw new ToolError(`No such file or directory: ${userPath}`);
      if (st.isDirectory()) {
        const children = await withSubdir(dir, name, (sub) => fsp.readdir(fdPath(sub)));
        if (children.length > 0 && !recursive) {
          throw new ToolError(`Folder '${userPath}' is not empty (${children.length} entries); pass recursive: true to delete it with its content.`);
        }
      }
      // through open folders, so a subfolder swapped for a link halfway is never followed out
      await removeAt(dir, name);
      return st;
    });
    const out = { path: rel(ctx, entry), type: typeOf(st) };
    return reply.data(`Deleted ${out.type} ${out.path}.`, out);
  },
});

const mkdir = defineTool({
  name: "mkdir",
  title: "Create a folder",
  description: "Create a folder; an existing one is fine.",
  input: {
    path: pathParam("Folder to create"),
    parents: z.boolean().default(true).describe("Create missing parent folders too"),
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
      // made one folder at a time from the workspace root, never through a link
      if (parents) await withDir(ctx.workspace, dir, { create: true, shown: userPath }, async () => undefined);
      else await withParent(ctx, dir, {}, (parent, name) => fsp.mkdir(fdPath(parent, name)));
    }
    const out = { path: rel(ctx, dir), created: !existing };
    return reply.data(existing ? `Folder ${out.path} already exists.` : `Created folder ${out.path}.`, out);
  },
});

const info = defineTool({
  name: "info",
  title: "Path details",
  description: "Details of a path: type, size, mode, times, MIME type; for a symlink also where it points.",
  input: { path: z.string() },
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
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ path: userPath }, ctx) {
    const entry = resolveEntry(ctx, userPath);
    const { st, kind } =
      entry === ctx.workspace
        ? { st: await fsp.lstat(entry), kind: undefined }
        : await withParent(ctx, entry, {}, (dir, name) => describeAt(dir, name, userPath));
    let target: string | undefined;
    if (st.isSymbolicLink()) {
      try {
        target = rel(ctx, resolveExisting(ctx, userPath));
      } catch (err) {
        target = `(not followed: ${(err as Error).message})`;
      }
    }
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
      ...(st.isFile() && st.nlink > 1 ? [`hard link (${st.nlink} names for this file): its content is not read`] : []),
    ].join("\n");
    return reply.data(text, out);
  },
});

/** An entry's own metadata, and for a plain file what it holds (read without following a link). */
async function describeAt(dir: OpenFile, name: string, userPath: string): Promise<{ st: fs.Stats; kind?: FileKind }> {
  const st = lstatAt(dir, name);
  if (!st) throw new ToolError(`No such file or directory: ${userPath}`);
  if (!st.isFile() || st.nlink > 1) return { st };
  const file = await openFileAt(dir, name, userPath);
  try {
    return { st, kind: await kindOf(name, file.handle) };
  } finally {
    await file.handle.close();
  }
}

export default [move, copy, remove, mkdir, info];
