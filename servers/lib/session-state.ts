// Per-client-session state inside a shared child (a BrowserContext, terminals, interpreters).
// The hub names the session in _meta["agentbox/session"] and notifies when it ends; state that
// sits idle longer than idleMs is freed as well. A session is idle when no call on it is running
// (see use) and none has touched it for idleMs; the one sweeper here is the only one a server needs.
import { onSessionClosed, registerSessionDescriber } from "./session-events.js";

export interface SessionStoreOptions<T> {
  create(session: string): Promise<T> | T;
  dispose(state: T, session: string, reason: "closed" | "idle" | "shutdown"): Promise<void> | void;
  /** Free a session's state after this long without use; 0 keeps it until the session ends. */
  idleMs?: number;
  /** Summarise a session's state for hub_sessions, reported under `describeAs`. */
  describe?(state: T, session: string): unknown;
  describeAs?: string;
  /**
   * For state with parts that have their own idle time (a client's terminals): free the parts
   * last used before `cutoff`, and say whether any part is still in use, which keeps the session
   * however long ago it was itself last touched (a call still waiting on one of its terminals).
   */
  sweepParts?(state: T, session: string, cutoff: number): Promise<boolean> | boolean;
}

interface Entry<T> {
  state: Promise<T>;
  lastUsed: number;
  /** Calls running on the session right now (see use). */
  busy: number;
}

export class SessionStore<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly sweeper?: NodeJS.Timeout;
  /** The sweep under way: a tick while one still frees state skips rather than freeing it twice. */
  private sweeping?: Promise<void>;

  constructor(private readonly options: SessionStoreOptions<T>) {
    const idleMs = options.idleMs ?? 0;
    if (idleMs > 0) {
      this.sweeper = setInterval(
        () => {
          this.sweeping ??= this.sweep().finally(() => (this.sweeping = undefined));
        },
        Math.max(100, Math.min(idleMs / 4, 30_000)),
      );
      this.sweeper.unref();
    }
    onSessionClosed((session) => this.release(session, "closed"));
    const { describe, describeAs } = options;
    if (describe) {
      registerSessionDescriber(describeAs ?? "state", async (session) => {
        const state = this.entries.get(session)?.state;
        return state ? describe(await state, session) : undefined;
      });
    }
  }

  /** The session's state, created on first use. */
  async get(session: string): Promise<T> {
    return this.entry(session).state;
  }

  /**
   * Run `fn` with the session's state (created on first use), holding the session busy: the idle
   * sweep does not free it while `fn` runs, however long, and its idle time starts when the last
   * call ends. The session ending or shutdown still frees it.
   */
  async use<R>(session: string, fn: (state: T) => Promise<R> | R): Promise<R> {
    const entry = this.entry(session);
    entry.busy++;
    try {
      return await fn(await entry.state);
    } finally {
      entry.busy--;
      entry.lastUsed = Date.now();
    }
  }

  private entry(session: string): Entry<T> {
    let entry = this.entries.get(session);
    if (!entry) {
      const state = Promise.resolve().then(() => this.options.create(session));
      const created: Entry<T> = { state, lastUsed: Date.now(), busy: 0 };
      this.entries.set(session, created);
      // forget a state that failed to create, unless the session has a newer one by now
      state.catch(() => this.entries.get(session) === created && this.entries.delete(session));
      entry = created;
    }
    entry.lastUsed = Date.now();
    return entry;
  }

  /** The state if the session already has one, without creating it. */
  peek(session: string): Promise<T> | undefined {
    const entry = this.entries.get(session);
    if (entry) entry.lastUsed = Date.now();
    return entry?.state;
  }

  sessions(): string[] {
    return [...this.entries.keys()];
  }

  async release(session: string, reason: "closed" | "idle" | "shutdown" = "closed"): Promise<void> {
    const entry = this.entries.get(session);
    if (!entry) return;
    this.entries.delete(session);
    try {
      await this.options.dispose(await entry.state, session, reason);
    } catch {
      // state that failed to create or dispose has nothing left to free
    }
  }

  async releaseAll(): Promise<void> {
    await Promise.all(this.sessions().map((s) => this.release(s, "shutdown")));
  }

  /**
   * Free every session idle for longer than idleMs as of `now` (after freeing idle parts, see
   * sweepParts). The timer calls this; a test may pass a clock of its own.
   */
  async sweep(now = Date.now()): Promise<void> {
    const idleMs = this.options.idleMs ?? 0;
    if (idleMs <= 0) return;
    const cutoff = now - idleMs;
    for (const [session, entry] of [...this.entries]) {
      // parts go on their own idle time even while a call runs on another part of the session
      const { sweepParts } = this.options;
      const partsInUse = sweepParts ? await entry.state.then((state) => sweepParts(state, session, cutoff)).catch(() => false) : false;
      if (entry.busy === 0 && entry.lastUsed < cutoff && !partsInUse) await this.release(session, "idle");
    }
  }
}
