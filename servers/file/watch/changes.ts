// Who listens to a workspace's changes, and the one watch that serves them all: resource
// subscriptions (per session, bounded) and change-feed readers (a lease renewed by each read).
// The watch runs while anyone listens and stops when nobody does; each coalesced change goes into
// the feed's ring and, once per batch, to every subscribed URI at or above it.
import type { Logger } from "../../lib/log.js";
import { ToolError } from "../../lib/tool.js";
import { ChangeRing, type Change } from "./ring.js";
import { WorkspaceWatcher, type WatchLimits } from "./watcher.js";

export interface ChangesLimits extends WatchLimits {
  ringSize: number;
  /** How long a change-feed reader keeps the watch running after its last read. */
  feedIdleMs: number;
  subscriptionsPerSession: number;
  subscriptionsTotal: number;
}

function positive(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

export function limitsFromEnv(): ChangesLimits {
  const ringSize = positive("AGENTBOX_WATCH_RING", 1000);
  return {
    maxDirs: positive("AGENTBOX_WATCH_MAX_DIRS", 2000),
    maxEntries: positive("AGENTBOX_WATCH_MAX_ENTRIES", 100_000),
    coalesceMs: 150,
    maxPending: Math.max(ringSize, 1000),
    ringSize,
    feedIdleMs: positive("AGENTBOX_WATCH_IDLE_MS", 10 * 60_000),
    subscriptionsPerSession: 1000,
    subscriptionsTotal: 10_000,
  };
}

/** The workspace-relative path a change is under, and each folder above it ("" is the root). */
function selfAndAncestors(relative: string): string[] {
  const out = [relative];
  for (let i = relative.lastIndexOf("/"); i > 0; i = relative.lastIndexOf("/", i - 1)) out.push(relative.slice(0, i));
  if (relative !== "") out.push("");
  return out;
}

export class WorkspaceChanges {
  readonly ring: ChangeRing;
  private readonly watcher: WorkspaceWatcher;
  /** session -> uri -> workspace-relative path */
  private readonly bySession = new Map<string, Map<string, string>>();
  /** workspace-relative path -> uri -> how many sessions */
  private readonly byPath = new Map<string, Map<string, number>>();
  private total = 0;
  private readonly feedReaders = new Map<string, NodeJS.Timeout>();
  private settling: Promise<void> = Promise.resolve();

  constructor(
    root: string,
    readonly limits: ChangesLimits,
    private readonly notify: (uri: string) => void,
    private readonly log: Logger,
  ) {
    this.ring = new ChangeRing(limits.ringSize);
    this.watcher = new WorkspaceWatcher(root, limits, {
      changes: (batch) => this.heard(batch),
      lost: (why) => {
        this.log.warn("workspace changes lost", { why });
        this.ring.markLoss();
        // a subscriber cannot tell what it missed: tell each its resource may have changed
        for (const uris of this.byPath.values()) for (const uri of uris.keys()) this.notify(uri);
      },
      capped: (note) => this.log.warn("workspace watch capped", { note }),
    });
  }

  get watching(): boolean {
    return this.watcher.running;
  }

  /** What the watch leaves out, if anything. */
  get cappedNote(): string | undefined {
    return this.watcher.cappedNote;
  }

  subscribe(session: string, uri: string, relative: string): Promise<void> {
    let mine = this.bySession.get(session);
    if (mine?.has(uri)) return this.settled();
    if ((mine?.size ?? 0) >= this.limits.subscriptionsPerSession) {
      throw new ToolError(
        `This session already has ${this.limits.subscriptionsPerSession} resource subscriptions; unsubscribe some, or subscribe to a folder.`,
      );
    }
    if (this.total >= this.limits.subscriptionsTotal) {
      throw new ToolError(`The file server already holds ${this.limits.subscriptionsTotal} resource subscriptions; try again once some end.`);
    }
    if (!mine) this.bySession.set(session, (mine = new Map()));
    mine.set(uri, relative);
    const uris = this.byPath.get(relative) ?? new Map<string, number>();
    uris.set(uri, (uris.get(uri) ?? 0) + 1);
    this.byPath.set(relative, uris);
    this.total++;
    return this.update();
  }

  unsubscribe(session: string, uri: string): Promise<void> {
    const mine = this.bySession.get(session);
    const relative = mine?.get(uri);
    if (!mine || relative === undefined) return this.settled();
    mine.delete(uri);
    if (mine.size === 0) this.bySession.delete(session);
    const uris = this.byPath.get(relative)!;
    const left = uris.get(uri)! - 1;
    if (left > 0) uris.set(uri, left);
    else uris.delete(uri);
    if (uris.size === 0) this.byPath.delete(relative);
    this.total--;
    return this.update();
  }

  /** A change-feed read: the watch runs (starting now if it was off) until this session stops reading for feedIdleMs. */
  read(session: string): Promise<void> {
    clearTimeout(this.feedReaders.get(session));
    const expiry = setTimeout(() => {
      this.feedReaders.delete(session);
      void this.update();
    }, this.limits.feedIdleMs);
    expiry.unref();
    this.feedReaders.set(session, expiry);
    return this.update();
  }

  /** The session ended: its subscriptions and its feed lease end with it. */
  sessionClosed(session: string): Promise<void> {
    for (const uri of [...(this.bySession.get(session)?.keys() ?? [])]) void this.unsubscribe(session, uri);
    clearTimeout(this.feedReaders.get(session));
    this.feedReaders.delete(session);
    return this.update();
  }

  stop(): Promise<void> {
    for (const timer of this.feedReaders.values()) clearTimeout(timer);
    this.feedReaders.clear();
    return this.watcher.stop();
  }

  /** Start or stop the watch to match whether anyone listens; one transition at a time. */
  private update(): Promise<void> {
    this.settling = this.settling.then(async () => {
      const wanted = this.total > 0 || this.feedReaders.size > 0;
      if (wanted && !this.watcher.running) {
        // whatever happened while nobody watched is not in the ring: cursors from before know they missed it
        this.ring.markLoss();
        await this.watcher.start();
        this.log.info("watching the workspace", { subscriptions: this.total, feedReaders: this.feedReaders.size });
      } else if (!wanted && this.watcher.running) {
        await this.watcher.stop();
        this.log.info("stopped watching the workspace: nobody listens");
      }
    });
    return this.settling;
  }

  private settled(): Promise<void> {
    return this.settling;
  }

  private heard(batch: Change[]): void {
    const told = new Set<string>();
    for (const change of batch) {
      this.ring.push(change);
      for (const relative of selfAndAncestors(change.path)) {
        for (const uri of this.byPath.get(relative)?.keys() ?? []) told.add(uri);
      }
    }
    for (const uri of told) this.notify(uri);
  }
}
