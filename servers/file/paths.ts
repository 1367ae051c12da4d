// The file server's view of the shared path guard: every tool resolves user paths here, so the
// extra rules (read-only mode, the reserved .agentbox folder, operating on a link itself) live
// in one place.
import fs from "node:fs";
import path from "node:path";
import { isInside, relativeToWorkspace, resolveInWorkspace } from "../lib/workspace.js";
import { openVerified, withDir, type OpenedFile } from "../lib/safe-fs.js";
import { ToolError, type ToolContext } from "../lib/tool.js";
import { toolName } from "../lib/names.js";
import type { OpenFile } from "../lib/open-file.js";

/** agentbox's own data (snapshots) inside the workspace; never visible through the file tools. */
export const RESERVED_DIR = ".agentbox";

export function isReadOnly(): boolean {
  const v = (process.env.AGENTBOX_FILE_READONLY ?? "").toLowerCase();
  return v === "1" || v === "true" || v === "yes";
}

const READING_TOOLS = ["read", "read_many", "list", "tree", "find", "grep", "info", "snapshot_list", "changes"];

/** Refuse a modifying tool (its unprefixed name) in read-only mode, naming the tool and what is still allowed. */
export function assertWritable(tool: string): void {
  if (isReadOnly()) {
    throw new ToolError(
      `The file server is in read-only mode (AGENTBOX_FILE_READONLY=1): ${toolName(tool)} is refused. ` +
        `Reading tools (${READING_TOOLS.map(toolName).join(", ")}) still work.`,
    );
  }
}

export function reservedRoot(workspace: string): string {
  return path.join(workspace, RESERVED_DIR);
}

function assertNotReserved(workspace: string, real: string, userPath: string): void {
  if (isInside(reservedRoot(workspace), real)) {
    throw new ToolError(
      `Path '${userPath}' is inside '${RESERVED_DIR}', which holds agentbox's snapshots and is not accessible ` +
        "through the file tools; use the snapshot tools instead.",
    );
  }
}

/** An existing path to read; symlinks are followed but must stay inside the workspace. */
export function resolveExisting(ctx: ToolContext, userPath: string): string {
  const real = resolveInWorkspace(ctx.workspace, userPath);
  assertNotReserved(ctx.workspace, real, userPath);
  return real;
}

/**
 * An existing path opened for reading and proven, from the open descriptor, to be inside the
 * workspace and outside .agentbox (a name checked and then opened could have been swapped for a
 * link in between). fn gets the open file; it is closed afterwards.
 */
export async function withOpened<T>(ctx: ToolContext, userPath: string, fn: (file: OpenedFile) => Promise<T>): Promise<T> {
  const file = await openVerified(ctx.workspace, resolveExisting(ctx, userPath), userPath);
  try {
    assertNotReserved(ctx.workspace, file.where, userPath);
    return await fn(file);
  } finally {
    await file.handle.close();
  }
}

/**
 * The folder holding `real` (a path from resolveTarget or resolveEntry), opened from the workspace
 * root without following links, with the name inside it: writes, moves and deletes act on
 * (folder, name), so no link swapped in later can send them out of the workspace.
 */
export async function withParent<T>(
  ctx: ToolContext,
  real: string,
  options: { create?: boolean },
  fn: (dir: OpenFile, name: string) => Promise<T>,
): Promise<T> {
  const parent = path.dirname(real);
  return withDir(ctx.workspace, parent, { ...options, shown: rel(ctx, parent) }, (dir) => fn(dir, path.basename(real)));
}

/** A path to create or overwrite: may not exist yet, and a final symlink pointing out is refused. */
export function resolveTarget(ctx: ToolContext, userPath: string): string {
  const real = resolveInWorkspace(ctx.workspace, userPath, { allowMissing: true, noFollowFinal: true });
  assertNotReserved(ctx.workspace, real, userPath);
  return real;
}

/**
 * The directory entry itself, not what a symlink points to: for delete and move, which act on the
 * link (harmless even when it points out) rather than on its target. The parent must be real and
 * inside the workspace.
 */
export function resolveEntry(ctx: ToolContext, userPath: string): string {
  if (typeof userPath !== "string" || userPath.length === 0) throw new ToolError("Path is empty.");
  if (userPath.includes("\0")) throw new ToolError("Path contains a NUL byte.");
  const absolute = path.resolve(ctx.workspace, stripFileUri(userPath));
  if (!isInside(ctx.workspace, absolute)) {
    throw new ToolError(`Path '${userPath}' is outside the workspace (${ctx.workspace}); use a path inside it.`);
  }
  if (absolute === ctx.workspace) return absolute;
  const parent = resolveInWorkspace(ctx.workspace, path.dirname(absolute));
  const entry = path.join(parent, path.basename(absolute));
  assertNotReserved(ctx.workspace, entry, userPath);
  try {
    fs.lstatSync(entry);
  } catch {
    throw new ToolError(`No such file or directory: ${userPath}`);
  }
  return entry;
}

function stripFileUri(p: string): string {
  // the shared guard understands file: URIs; resolveEntry splits the path itself, so decode first
  if (!p.startsWith("file:")) return p;
  try {
    return decodeURIComponent(new URL(p).pathname);
  } catch {
    throw new ToolError(`Not a valid file: URI: ${p}`);
  }
}

export function assertNotRoot(ctx: ToolContext, real: string, what: string): void {
  if (real === ctx.workspace) throw new ToolError(`Refusing to ${what} the workspace root itself; name a path inside it.`);
}

/** Workspace-relative form for messages and results. */
export function rel(ctx: ToolContext, absolute: string): string {
  return relativeToWorkspace(ctx.workspace, absolute);
}
