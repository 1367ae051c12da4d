// People as tenants: on a hub with sign-in (OAuth), each person a token names gets a tenant of their
// own the first time they sign in, with everything a configured tenant has (uid, workspace, home,
// limits, port block, disk budget). Their number is bounded (auth.oauth.maxTenants), so a flood of
// new subjects cannot exhaust uids, ports, disk shares or processes. A person's tenant is named by
// a digest of the issuer and subject: a subject is the provider's string, never a path or user name.
// A person who is away (no session, no request for auth.oauth.idleSeconds) has their tenant dropped
// and their place freed; they come back to the same uid and files.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { HubConfig } from "../config/config.js";
import type { Isolation } from "./isolation.js";
import type { NetworkPlan } from "./network.js";
import type { Clock, Timer } from "../protocol/clock.js";
import { buildPersonTenant, derivedUid, tenantFolder, tenantStateFolder, type Tenant } from "./tenants.js";
import { UidTaken } from "./uid-claims.js";
import type { UidLocks } from "./uid-locks.js";

/** Why a person gets no tenant: said to them as the reply's message. */
export class PersonRefused extends Error {}

/** The tenant's name for a person: stable, and a valid tenant name whatever the subject holds. */
export function personTenantName(issuer: string, person: string): string {
  return `p-${createHash("sha256").update(`${issuer}\0${person}`).digest("hex").slice(0, 24)}`;
}

/** What the hub does with a person's tenant when it idles (./people.ts drops it; the hub owns what runs). */
export interface PersonLifecycle<T> {
  /** Serve a new tenant: prepare it, start what it needs, and add it to the hub's list. */
  serve(tenant: Tenant): Promise<T>;
  /** Whether the tenant has anything going on: a session left, or a call still running. */
  busy(tenant: T): boolean;
  /** Stop everything of the tenant and take it off the hub's list; its folder and files stay. Never rejects. */
  drop(tenant: T): Promise<void>;
}

export class People<T extends Tenant> {
  private readonly byName = new Map<string, Promise<T>>();
  /** Each person's tenant once it is ready: only a ready tenant can idle. */
  private readonly ready = new Map<string, T>();
  /** When each person last made a request. */
  private readonly lastSeen = new Map<string, number>();
  /** Tenants being dropped: they hold their place until gone, and their person's next request waits for that. */
  private readonly dropping = new Map<string, Promise<void>>();
  /** Uids that own a folder in the workspace (earlier runs' people): a new person never gets one of them. */
  private readonly foldersByUid = new Map<number, string>();
  private timer?: Timer;

  constructor(
    private readonly config: HubConfig & { oauth: NonNullable<HubConfig["oauth"]> },
    private readonly isolation: Isolation,
    private readonly network: NetworkPlan,
    /** Every tenant the hub serves now, configured ones included. */
    private readonly tenants: () => readonly T[],
    private readonly lifecycle: PersonLifecycle<T>,
    /** The hub's time: how long a person has been away decides when their tenant is dropped. */
    private readonly clock: Clock,
    /** The uids other hubs on this machine give their tenants (per-tenant uids only): a person never gets one of them. */
    private readonly uidLocks?: UidLocks,
  ) {
    let entries: string[] = [];
    try {
      entries = fs.readdirSync(config.workspace);
    } catch {
      // no workspace yet: nobody has signed in before
    }
    for (const entry of entries) {
      try {
        const st = fs.statSync(path.join(config.workspace, entry));
        if (st.isDirectory() && st.uid !== 0) this.foldersByUid.set(st.uid, entry);
      } catch {
        // gone meanwhile
      }
    }
  }

  /** How many people have a tenant. */
  get count(): number {
    return this.byName.size;
  }

  /** Look for idle people every so often: a tenant is dropped at most this much later than its idle period allows. */
  start(): void {
    this.timer ??= this.clock.every(Math.min(60_000, Math.max(1000, this.config.oauth.idleMs / 4)), () => void this.dropIdle());
  }

  async stop(): Promise<void> {
    this.timer?.cancel();
    await Promise.allSettled(this.dropping.values());
  }

  /**
   * Drop the tenants of people who made no request for the idle period and have nothing going on,
   * so their places under maxTenants free up. Their uid stays theirs (the owner of their folder).
   */
  dropIdle(): Promise<unknown> {
    const now = this.clock.now();
    for (const [name, tenant] of this.ready) {
      if (this.dropping.has(name) || now - (this.lastSeen.get(name) ?? 0) < this.config.oauth.idleMs || this.lifecycle.busy(tenant)) continue;
      this.ready.delete(name);
      const dropped = this.lifecycle.drop(tenant).finally(() => {
        this.byName.delete(name);
        this.lastSeen.delete(name);
        this.dropping.delete(name);
        this.network.release?.(name);
      });
      this.dropping.set(name, dropped);
    }
    return Promise.allSettled(this.dropping.values());
  }

  /** The tenant of this person: theirs since an earlier request, or made now if the cap allows. */
  tenantFor(person: string): Promise<T> {
    const name = personTenantName(this.config.oauth.issuer, person);
    this.lastSeen.set(name, this.clock.now());
    // their tenant is being dropped: a new one, with the same uid and folder, once it is gone
    const dropped = this.dropping.get(name);
    if (dropped) return dropped.then(() => this.tenantFor(person));
    let tenant = this.byName.get(name);
    if (!tenant) {
      if (this.byName.size >= this.config.oauth.maxTenants) {
        return Promise.reject(
          new PersonRefused(
            `this hub already serves as many people as it may (${this.config.oauth.maxTenants}, auth.oauth.maxTenants / AGENTBOX_OAUTH_MAX_TENANTS); ` +
              "ask its operator to raise the bound.",
          ),
        );
      }
      tenant = this.make(name, person);
      this.byName.set(name, tenant);
      tenant.then(
        (ready) => this.ready.set(name, ready),
        // a failed start may be retried by the person's next request
        () => this.byName.delete(name),
      );
    }
    return tenant;
  }

  private async make(name: string, person: string): Promise<T> {
    const network = this.network.allot ? this.network.allot(name) : undefined;
    if (this.network.allot && !network) {
      throw new PersonRefused(
        "the tenants' ports hold no block for another person: the operator can widen network.ports (AGENTBOX_TENANT_PORTS) or lower " +
          "network.portsPerTenant (AGENTBOX_PORTS_PER_TENANT).",
      );
    }
    const plan = network ? { ...this.network, tenants: new Map([[name, network]]) } : undefined;
    return this.lifecycle.serve(buildPersonTenant(this.config, this.isolation, name, person, this.uidFor(name), plan));
  }

  /**
   * A uid no other tenant has: the owner of the person's folder when an earlier run made it (their
   * files stay theirs), else one derived from the name, stepping past any other tenant's, or the
   * owner of another folder in the workspace, a uid another hub on this machine gives a tenant, or
   * one that still owns another workspace's tenant's folder.
   */
  private uidFor(name: string): number {
    const taken = new Set(this.tenants().flatMap((t) => (t.identity ? [t.identity.uid] : [])));
    taken.add(process.getuid?.() ?? 0);
    const own = [...this.foldersByUid].find(([, folder]) => folder === name)?.[0];
    if (own !== undefined && !taken.has(own) && this.locked(own, name)) return own;
    for (let attempt = 0; ; attempt++) {
      const uid = derivedUid(attempt ? `${name}#${attempt}` : name, this.config.workspace);
      if (!taken.has(uid) && !this.foldersByUid.has(uid) && this.locked(uid, name)) {
        this.foldersByUid.set(uid, name);
        return uid;
      }
    }
  }

  /**
   * Whether `uid` is now this hub's for `name`: false when another live hub gives it to a tenant of its own (./uid-locks.ts),
   * or another tenant's folder is still the uid's (./uid-claims.ts).
   */
  private locked(uid: number, name: string): boolean {
    try {
      this.uidLocks?.take(uid, { name, folder: tenantFolder(this.config, name), state: tenantStateFolder(this.config, name, uid) });
      return true;
    } catch (err) {
      if (err instanceof UidTaken) return false;
      throw err;
    }
  }
}
