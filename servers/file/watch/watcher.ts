// One chokidar watch over a workspace, bounded and coalesced: symlinks are never followed (a link
// to / or to another tenant's workspace is one entry, never a tree), agentbox's own folder and
// the usual internal folders are skipped, at most `maxDirs` folders and `maxEntries` entries are
// watched (beyond that nothing new is, and `capped` says so), and each path's events within
// `coalesceMs` become one change.
import path from "node:path";
import { watch, type FSWatcher } from "chokidar";
import { isInside } from "../../lib/workspace.js";
import { RESERVED_DIR } from "../paths.js";
import { DEFAULT_EXCLUDES } from "../walk.js";
import type { Change, ChangeKind } from "./ring.js";

export interface WatchLimits {
  maxDirs: number;
  maxEntries: number;
  coalesceMs: number;
  /** Distinct paths waiting to be told at once; beyond it a burst is reported as lost. */
  maxPending: number;
}

export interface WatchSink {
  changes(batch: Change[]): void;
  /** Events were dropped (too many paths at once, a watch error): whoever relies on completeness must know. */
  lost(why: string): void;
  capped(what: string): void;
}

/** Folders never watched wherever they are: agentbox's own (at the root) and tools' internals. */
export const SKIPPED_NAMES = DEFAULT_EXCLUDES;

// an event after an earlier one for the same path within a window: what the pair amounts to
function merge(earlier: ChangeKind | undefined, later: ChangeKind): ChangeKind | undefined {
  if (earlier === "added" && later === "removed") return undefined;
  if (earlier === "added") return "added";
  if (earlier === "removed" && later === "added") return "changed";
  return later;
}

export class WorkspaceWatcher {
  private watcher?: FSWatcher;
  private readonly dirs = new Set<string>();
  private readonly entries = new Set<string>();
  private pending = new Map<string, ChangeKind | undefined>();
  private timer?: NodeJS.Timeout;
  private overflowed = false;
  /** What the watch left out, once said. */
  cappedNote?: string;

  constructor(
    private readonly root: string,
    private readonly limits: WatchLimits,
    private readonly sink: WatchSink,
  ) {}

  get running(): boolean {
    return this.watcher !== undefined;
  }

  start(): Promise<void> {
    if (this.watcher) return Promise.resolve();
    const watcher = watch(this.root, {
      ignoreInitial: true,
      followSymlinks: false,
      // our own coalescing merges an editor's unlink+add; chokidar's would also hide dotfiles
      atomic: false,
      ignorePermissionErrors: true,
      ignored: (p, stats) => this.ignored(p, stats),
    });
    this.watcher = watcher;
    const on = (kind: ChangeKind, dir: boolean) => (p: string) => this.seen(p, kind, dir);
    watcher
      .on("add", on("added", false))
      .on("addDir", on("added", true))
      .on("change", on("changed", false))
      .on("unlink", on("removed", false))
      .on("unlinkDir", on("removed", true))
      .on("error", (err) => this.sink.lost(`the watch failed: ${(err as Error).message}`));
    return new Promise((resolve) => watcher.once("ready", () => resolve()));
  }

  async stop(): Promise<void> {
    const watcher = this.watcher;
    this.watcher = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
    this.dirs.clear();
    this.entries.clear();
    this.cappedNote = undefined;
    await watcher?.close();
  }

  private ignored(p: string, stats?: { isDirectory(): boolean }): boolean {
    if (!isInside(this.root, p)) return true;
    const relative = path.relative(this.root, p);
    if (relative === "") return false;
    if (relative === RESERVED_DIR || relative.startsWith(RESERVED_DIR + path.sep)) return true;
    if (SKIPPED_NAMES.includes(path.basename(p))) return true;
    // chokidar asks again with stats once it has them: count each entry once, when its kind is known
    if (!stats || this.entries.has(p)) return false;
    if (this.entries.size >= this.limits.maxEntries) return this.cap(`more than ${this.limits.maxEntries} files and folders`);
    if (stats.isDirectory()) {
      if (this.dirs.size >= this.limits.maxDirs) return this.cap(`more than ${this.limits.maxDirs} folders`);
      this.dirs.add(p);
    }
    this.entries.add(p);
    return false;
  }

  private cap(what: string): true {
    if (!this.cappedNote) {
      this.cappedNote = `The workspace has ${what}; the rest is not watched (raise AGENTBOX_WATCH_MAX_DIRS / AGENTBOX_WATCH_MAX_ENTRIES, or keep big trees in skipped folders such as ${SKIPPED_NAMES.join(", ")}).`;
      this.sink.capped(this.cappedNote);
    }
    return true;
  }

  private seen(absolute: string, kind: ChangeKind, dir: boolean): void {
    if (kind === "removed") {
      this.entries.delete(absolute);
      if (dir) this.dirs.delete(absolute);
    }
    const relative = path.relative(this.root, absolute).split(path.sep).join("/");
    if (!this.pending.has(relative) && this.pending.size >= this.limits.maxPending) {
      this.overflowed = true;
    } else {
      this.pending.set(relative, merge(this.pending.get(relative), kind));
    }
    this.timer ??= setTimeout(() => this.flush(), this.limits.coalesceMs);
  }

  private flush(): void {
    this.timer = undefined;
    const at = new Date().toISOString();
    const batch: Change[] = [];
    for (const [p, kind] of this.pending) if (kind) batch.push({ path: p, kind, at });
    this.pending = new Map();
    if (this.overflowed) {
      this.overflowed = false;
      this.sink.lost(`more than ${this.limits.maxPending} paths changed within ${this.limits.coalesceMs} ms`);
    }
    if (batch.length) this.sink.changes(batch);
  }
}
