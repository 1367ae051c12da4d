// No two hubs on one machine give a tenant the same uid. A hub ends every process under its
// tenants' uids that is not below its own servers (./sweeper.ts): before it listens, and in every
// sweep after. Two hubs sharing a uid therefore kill each other's servers, terminals and browsers
// as leftovers or escapees. Two workspaces' derived uids (./tenants.ts) can meet, one time in 40,000
// for each pair of tenants (a test suite starting hundreds of hubs met it), and an operator can give
// two hubs' tenants the same explicit uid. So each uid a hub gives a tenant is locked
// (./lock-file.ts) for as long as the hub serves that tenant; a uid another live hub holds is
// refused at start, and stepped past for a person signing in (./people.ts). The locks live in one
// folder for the whole machine (machineLockDir), whatever state folder each hub was given. What a
// uid owns once its hub has stopped is guarded by its claim (./uid-claims.ts).
import path from "node:path";
import { HeldLocks, liveHolder, LockFile, type Holder } from "./lock-file.js";
import type { Logger } from "../../servers/lib/log.js";
import { CONFIG_UID, UidClaims, UidOwned, UidTaken, type UidSource, type UidTenant } from "./uid-claims.js";

interface UidHolder extends Holder {
  uid: number;
  tenant: string;
  workspace: string;
}

/** A tenant's uid another live hub gives one of its tenants. */
export class UidHeld extends UidTaken {
  constructor(
    tenant: string,
    uid: number,
    readonly holder: UidHolder,
    source: UidSource,
  ) {
    super(
      tenant,
      uid,
      `which another agentbox hub (pid ${holder.pid}, running since ${holder.since}) gives its tenant '${holder.tenant}' on the workspace ` +
        `${holder.workspace}. A hub ends every process under its tenants' uids that is not its own, so two hubs sharing one would kill each other's servers.`,
      source,
      "stop that hub",
    );
  }
}

const fileOf = (uid: number) => `uid-${uid}.lock`;

export class UidLocks {
  private readonly held: HeldLocks;
  private readonly claims: UidClaims;

  constructor(
    lockDir: string,
    private readonly workspace: string,
    /** Where uids are claimed for good (./uid-claims.ts, machineClaimDir). */
    claimDir: string,
    private readonly log?: Logger,
  ) {
    this.held = new HeldLocks(lockDir);
    this.claims = new UidClaims(claimDir, workspace);
  }

  static fileFor(dir: string, uid: number): string {
    return path.join(dir, fileOf(uid));
  }

  /** The live hub other than this one that gives `uid` to a tenant, if any. */
  holderOf(uid: number): UidHolder | undefined {
    return this.held.has(fileOf(uid)) ? undefined : liveHolder<UidHolder>(UidLocks.fileFor(this.held.dir, uid));
  }

  /**
   * Takes `uid` for `tenant` until released or the process exits, and claims it for the tenant's folder; throws UidHeld
   * when a live hub holds it, UidOwned when another tenant's folder is still the uid's (then it holds nothing new).
   */
  take(uid: number, tenant: UidTenant, source: UidSource = CONFIG_UID): void {
    const heldBefore = this.held.has(fileOf(uid));
    const mine = LockFile.holder({ uid, tenant: tenant.name, workspace: path.resolve(this.workspace) });
    const taken = this.held.take(fileOf(uid), mine, `uid ${uid}`);
    if (taken !== true) throw new UidHeld(tenant.name, uid, taken.heldBy, source);
    // checked under the lock: no other hub can claim the uid between the check and the claim
    const other = this.claims.otherOwner(uid, tenant.name);
    if (other) {
      if (!heldBefore) this.release(uid);
      throw new UidOwned(tenant.name, uid, other, source);
    }
    const closed = this.claims.record(uid, tenant);
    if (closed.length > 0)
      this.log?.warn("closed what a gone tenant of this uid left to the uid's next tenant (given to root)", {
        uid,
        tenant: tenant.name,
        closed: closed.length,
        first: closed.slice(0, 5),
      });
  }

  /** Takes every uid of `tenants`, or none: on a refusal what was taken is given back before UidTaken is thrown. */
  takeAll(tenants: readonly (UidTenant & { uid: number; source: UidSource })[]): void {
    const taken: number[] = [];
    try {
      for (const t of tenants) {
        if (!this.held.has(fileOf(t.uid))) taken.push(t.uid);
        this.take(t.uid, t, t.source);
      }
    } catch (err) {
      for (const uid of taken) this.release(uid);
      throw err;
    }
  }

  release(uid: number): void {
    this.held.release(fileOf(uid));
  }

  releaseAll(): void {
    this.held.releaseAll();
  }
}
