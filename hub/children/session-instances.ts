// One tenant's per-session server instances: for a server configured `instances: "session"`, each
// client session that uses it gets a process of its own, so what that process asks (sampling,
// elicitation, roots) and what it keeps belong to that session alone. The tenant's catalog still
// lists the server from its shared prototype (hub/hub.ts); the prototype is never sent a call.
import { ChildUnavailableError, type Child } from "./child.js";

/** The cap on one server's per-session instances in a tenant is reached. */
export class SessionInstanceLimitError extends ChildUnavailableError {}

/** Which session an instance serves, and the configured server it is an instance of. */
export interface InstanceOwner {
  session: string;
  prototype: Child;
}

/** Builds (but does not start) a session's instance of a server: it starts on its first request. */
export type InstanceFactory = (prototype: Child, sequence: number) => Child;

export class SessionInstances {
  /** session id → prototype → that session's instance */
  private readonly bySession = new Map<string, Map<Child, Child>>();
  private readonly owners = new Map<Child, InstanceOwner>();
  private readonly counts = new Map<Child, number>();
  private sequence = 0;

  constructor(
    /** Instances of one server this tenant may run at once (AGENTBOX_SESSION_INSTANCES). */
    private readonly limit: number,
    private readonly build: InstanceFactory,
  ) {}

  /**
   * The child a session's request to `child` goes to: `child` itself for a shared server, else the
   * session's own instance, built on the session's first use. Synchronous, so two first calls of one
   * session at once get the same instance and the cap is checked in the same turn the room is taken.
   */
  route(child: Child, session: string): Child {
    if (child.config.instances !== "session") return child;
    const mine = this.bySession.get(session);
    const existing = mine?.get(child);
    if (existing) return existing;
    const running = this.counts.get(child) ?? 0;
    if (running >= this.limit) {
      throw new SessionInstanceLimitError(
        `The '${child.name}' server runs one instance per client session, and ${running} sessions already have one ` +
          `(the limit is ${this.limit}, AGENTBOX_SESSION_INSTANCES). Close client sessions you no longer use, ` +
          `or wait for idle ones to expire, then retry.`,
      );
    }
    const instance = this.build(child, ++this.sequence);
    this.owners.set(instance, { session, prototype: child });
    this.counts.set(child, running + 1);
    if (mine) mine.set(child, instance);
    else this.bySession.set(session, new Map([[child, instance]]));
    return instance;
  }

  /** The session and server an instance belongs to; undefined for any other child. */
  ownerOf(child: Child): InstanceOwner | undefined {
    return this.owners.get(child);
  }

  /** How many instances of this server run now. */
  countOf(prototype: Child): number {
    return this.counts.get(prototype) ?? 0;
  }

  /** Every instance, of every session (their processes belong to the tenant's servers). */
  running(): Child[] {
    return [...this.owners.keys()];
  }

  /** The session closed: its instances stop (their whole process trees); their room is free once they are gone. */
  async endSession(session: string): Promise<void> {
    const mine = this.bySession.get(session);
    if (!mine) return;
    this.bySession.delete(session);
    await Promise.allSettled([...mine.values()].map((instance) => this.stopInstance(instance)));
  }

  async stopAll(): Promise<void> {
    await Promise.allSettled([...this.bySession.keys()].map((session) => this.endSession(session)));
  }

  private async stopInstance(instance: Child): Promise<void> {
    try {
      await instance.stop();
    } finally {
      // counted, and known as the session's, until its process is gone: a client closing sessions as
      // fast as it opens them cannot run more than the cap at once, and what a stopping instance asks is still attributed exactly
      const owner = this.owners.get(instance);
      if (owner) this.counts.set(owner.prototype, (this.counts.get(owner.prototype) ?? 1) - 1);
      this.owners.delete(instance);
    }
  }
}
