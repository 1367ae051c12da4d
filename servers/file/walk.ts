// One bounded directory walk shared by tree, find, grep and the resource list. It never follows
// symlinked directories (no loops, no escapes, not even one swapped in mid-walk) and never enters agentbox's own .agentbox folder.
import fsp from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import { fdPath, openDirIn, openSubdir } from "../lib/safe-fs.js";
import { RESERVED_DIR } from "./paths.js";
import type { OpenFile } from "../lib/open-file.js";

export const DEFAULT_EXCLUDES = [".git", "node_modules"];

export interface WalkOptions {
  /** The workspace root: .agentbox directly under it is always skipped. */
  workspace: string;
  /** Include names starting with a dot. */
  hidden?: boolean;
  /** Globs matched against each entry's name and its path relative to the walk's start. */
  exclude?: string[];
  /** 1 lists only the start directory's entries. */
  maxDepth?: number;
}

export interface WalkEntry {
  absolute: string;
  /** Relative to the walk's start, with forward slashes. */
  relative: string;
  name: string;
  type: "file" | "directory" | "symlink" | "other";
  depth: number;
}

export function excluder(patterns: string[]): (name: string, relative: string) => boolean {
  if (patterns.length === 0) return () => false;
  const match = picomatch(patterns, { dot: true });
  return (name, relative) => match(name) || match(relative);
}

/**
 * Entries depth-first in name order; the caller stops iterating when it has enough. Every folder
 * is read through a descriptor opened from the workspace root without following links, so a
 * folder swapped for a link mid-walk is skipped rather than listed from outside.
 */
export async function* walk(start: string, options: WalkOptions): AsyncGenerator<WalkEntry> {
  const isExcluded = excluder(options.exclude ?? DEFAULT_EXCLUDES);
  const reserved = path.join(options.workspace, RESERVED_DIR);
  const maxDepth = options.maxDepth ?? Infinity;

  async function* visit(dir: OpenFile, absoluteDir: string, prefix: string, depth: number): AsyncGenerator<WalkEntry> {
    let dirents;
    try {
      dirents = await fsp.readdir(fdPath(dir), { withFileTypes: true });
    } catch {
      return; // unreadable or vanished meanwhile: nothing to list
    }
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const d of dirents) {
      const absolute = path.join(absoluteDir, d.name);
      const relative = prefix ? `${prefix}/${d.name}` : d.name;
      if (absolute === reserved) continue;
      if (!options.hidden && d.name.startsWith(".")) continue;
      if (isExcluded(d.name, relative)) continue;
      const type = d.isSymbolicLink() ? "symlink" : d.isDirectory() ? "directory" : d.isFile() ? "file" : "other";
      yield { absolute, relative, name: d.name, type, depth };
      if (type !== "directory" || depth >= maxDepth) continue;
      const sub = await openSubdir(dir, d.name, relative).catch(() => null);
      if (!sub) continue; // replaced by a link or removed since it was listed
      try {
        yield* visit(sub, absolute, relative, depth + 1);
      } finally {
        await sub.close();
      }
    }
  }

  const top = await openDirIn(options.workspace, start).catch(() => null);
  if (!top) return;
  try {
    yield* visit(top, start, "", 1);
  } finally {
    await top.close();
  }
}
