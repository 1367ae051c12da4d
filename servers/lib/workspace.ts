// The one path guard every server uses. Two CVEs in server-filesystem came from a prefix check
// without a separator and from following symlinks: we compare realpaths segment-wise instead.
import fs from "node:fs";
import path from "node:path";
import { ToolError } from "./tool.js";

export function workspaceRoot(): string {
  const configured = process.env.AGENTBOX_WORKSPACE || path.resolve("workspace");
  fs.mkdirSync(configured, { recursive: true });
  return fs.realpathSync(configured);
}

export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  // by whole segments: '..' or '../x' leave the root, a name like '..cache' does not
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

export interface ResolveOptions {
  /** The path may not exist yet (write, mkdir): check the nearest existing ancestor instead. */
  allowMissing?: boolean;
  /** For writes: refuse when the final component is a symlink, so a write never follows a link out. */
  noFollowFinal?: boolean;
}

/**
 * Resolve a user path (relative to the workspace, or absolute inside it, or a file: URI) and
 * return its real absolute path. Throws a ToolError saying why when the path leaves the workspace.
 */
export function resolveInWorkspace(root: string, userPath: string, options: ResolveOptions = {}): string {
  if (typeof userPath !== "string" || userPath.length === 0) throw new ToolError("Path is empty.");
  if (userPath.includes("\0")) throw new ToolError("Path contains a NUL byte.");
  let p = userPath;
  if (p.startsWith("file:")) {
    try {
      p = decodeURIComponent(new URL(p).pathname);
    } catch {
      throw new ToolError(`Not a valid file: URI: ${userPath}`);
    }
  }
  const absolute = path.resolve(root, p);
  if (!isInside(root, absolute)) {
    throw new ToolError(`Path '${userPath}' is outside the workspace (${root}); use a path inside it.`);
  }
  let real: string;
  try {
    const st = fs.lstatSync(absolute);
    if (st.isSymbolicLink() && options.noFollowFinal) {
      const target = realOrNull(absolute);
      if (!target || !isInside(root, target)) {
        throw new ToolError(`Path '${userPath}' is a symlink pointing outside the workspace; refusing to follow it.`);
      }
    }
    real = realOrNull(absolute) ?? absolute;
    if (st.isSymbolicLink() && !realOrNull(absolute)) {
      // unresolvable can also mean "points where this uid may not look": say where it points
      const target = path.resolve(path.dirname(absolute), fs.readlinkSync(absolute));
      if (!isInside(root, target)) throw new ToolError(`Path '${userPath}' is a symlink pointing outside the workspace (${target}); refusing to follow it.`);
      throw new ToolError(`Path '${userPath}' is a dangling symlink.`);
    }
  } catch (err) {
    if (err instanceof ToolError) throw err;
    real = resolveMissing(root, absolute);
    if (!options.allowMissing && isInside(root, real)) throw new ToolError(`No such file or directory: ${userPath}`);
  }
  if (!isInside(root, real)) {
    throw new ToolError(`Path '${userPath}' resolves (through a symlink) to ${real}, outside the workspace.`);
  }
  return real;
}

function realOrNull(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
}

// For a path that does not exist yet: realpath of the nearest existing ancestor + the rest.
function resolveMissing(root: string, absolute: string): string {
  const rest: string[] = [];
  let current = absolute;
  for (;;) {
    const real = realOrNull(current);
    if (real) return path.join(real, ...rest.reverse());
    try {
      const st = fs.lstatSync(current);
      if (st.isSymbolicLink()) {
        // a link this uid cannot resolve that points outside is refused as outside, not as dangling
        const target = path.resolve(path.dirname(current), fs.readlinkSync(current));
        if (!isInside(root, target)) return path.join(target, ...rest.reverse());
      }
      // exists but realpath failed: a dangling link somewhere in the chain
      throw new ToolError(`Path component '${current}' is a dangling symlink.`);
    } catch (err) {
      if (err instanceof ToolError) throw err;
    }
    const parent = path.dirname(current);
    if (parent === current) return absolute;
    rest.push(path.basename(current));
    current = parent;
  }
}

/** The workspace-relative form of an absolute path, for messages and results. */
export function relativeToWorkspace(root: string, absolute: string): string {
  return path.relative(root, absolute) || ".";
}
