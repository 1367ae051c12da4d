// People as tenants: on a hub with sign-in (OAuth), each person a token names gets a tenant of their
// own the first time they sign in, with everything a configured tenant has (uid, workspace, home,
// limits, port block, disk budget). Their number is bounded (auth.oauth.maxTenants), so a flood of
// new subjects cannot exhaust uids, ports, disk shares or processes. A person's tenant is named by
// a digest of the issuer and subject: a subject is the provider's string, never a path or user name.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { HubConfig } from "../config/config.js";
import type { Isolation } from "./isolation.js";
import type { NetworkPlan } from "./network.js";
import { buildPersonTenant, derivedUid, type Tenant } from "./tenants.js";

/** Why a person gets no tenant: said to them as the reply's message. */
export class PersonRefused extends Error {}

/** The tenant's name for a person: stable, and a valid tenant name whatever the subject holds. */
export function personTenantName(issuer: string, person: string): string {
  return `p-${createHash("sha256").update(`${issuer}\0${person}`).digest("hex").slice(0, 24)}`;
}

export class People<T extends Tenant> {
  private readonly byName = new Map<string, Promise<T>>();
  /** Uids that own a folder in the workspace (earlier runs' people): a new person never gets one of them. */
  private readonly foldersByUid = new Map<number, string>();

  constructor(
    private readonly config: HubConfig & { oauth: NonNullable<HubConfig["oauth"]> },
    private readonly isolation: Isolation,
    private readonly network: NetworkPlan,
    /** Every tenant the hub serves now, configured ones included. */
    private readonly tenants: () => readonly T[],
    /** Serve a new tenant: prepare it, start what it needs, and add it to the hub's list. */
    private readonly serve: (tenant: Tenant) => Promise<T>,
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

  /** The tenant of this person: theirs since an earlier request, or made now if the cap allows. */
  tenantFor(person: string): Promise<T> {
    const name = personTenantName(this.config.oauth.issuer, person);
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
      // a failed start may be retried by the person's next request
      tenant.catch(() => this.byName.delete(name));
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
    return this.serve(buildPersonTenant(this.config, this.isolation, name, person, this.uidFor(name), plan));
  }

  /**
   * A uid no other tenant has: the owner of the person's folder when an earlier run made it (their
   * files stay theirs), else one derived from the name, stepping past any other tenant's, or the
   * owner of another folder in the workspace.
   */
  private uidFor(name: string): number {
    const taken = new Set(this.tenants().flatMap((t) => (t.identity ? [t.identity.uid] : [])));
    taken.add(process.getuid?.() ?? 0);
    const own = [...this.foldersByUid].find(([, folder]) => folder === name)?.[0];
    if (own !== undefined && !taken.has(own)) return own;
    for (let attempt = 0; ; attempt++) {
      const uid = derivedUid(attempt ? `${name}#${attempt}` : name, this.config.workspace);
      if (!taken.has(uid) && !this.foldersByUid.has(uid)) {
        this.foldersByUid.set(uid, name);
        return uid;
      }
    }
  }
}
