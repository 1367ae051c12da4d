// Per-client-session state inside a shared child (a BrowserContext, terminals, interpreters).
// The hub names the session in _meta["agentbox/session"] and notifies when it ends; state that
// sits idle longer than idleMs is freed as well.
import { onSessionClosed, registerSessionDescriber } from "./session-events.js";

export interface SessionStoreOptions<T> {
  create(session: string): Promise<T> | T;
  dispose(state: T, session: string, reason: "closed" | "idle" | "shutdown"): Promise<void> | void;
  /** Free a session's state after this long without use; 0 keeps it until the session ends. */
  idleMs?: number;
  /** Summarise a session's state for hub_sessions, reported under `describeAs`. */
  describe?(state: T, session: string): unknown;
  describeAs?: string;
}

interface Entry<T> {
  state: Promise<T>;
  lastUsed: number;
}

export class SessionStore<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly sweeper?: NodeJS.Timeout;

  constructor(private readonly options: SessionStoreOptions<T>) {
    const idleMs = options.idleMs ?? 0;
    if (idleMs > 0) {
      this.sweeper = setInterval(() => void this.sweep(idleMs), Math.min(idleMs, 30_000));
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
    let entry = this.entries.get(session);
    if (!entry) {
      const state = Promise.resolve().then(() => this.options.create(session));
      entry = { state, lastUsed: Date.now() };
      this.entries.set(session, entry);
      state.catch(() => this.entries.delete(session));
    }
    entry.lastUsed = Date.now();
    return entry.state;
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

  private async sweep(idleMs: number): Promise<void> {
    const now = Date.now();
    for (const [session, entry] of this.entries) {
      if (now - entry.lastUsed > idleMs) await this.release(session, "idle");
    }
  }
}
