// No two hubs on one machine give a tenant the same uid. A hub ends every process under its
// tenants' uids that is not below its own servers (./sweeper.ts): before it listens, and in every
// sweep after. Two hubs sharing a uid therefore kill each other's servers, terminals and browsers
// as leftovers or escapees. Two workspaces' derived uids (./tenants.ts) can meet, one time in 40,000
// for each pair of tenants (a test suite starting hundreds of hubs met it), and an operator can give
// two hubs' tenants the same explicit uid. So each uid a hub gives a tenant is locked
// (./lock-file.ts) for as long as the hub serves that tenant; a uid another live hub holds is
// refused at start, and stepped past for a person signing in (./people.ts). The locks live in one
// folder for the whole machine (machineLockDir), whatever state folder each hub was given.
import path from "node:path";
import { HeldLocks, liveHolder, LockFile, type Holder } from "./lock-file.js";

interface UidHolder extends Holder {
  uid: number;
  tenant: string;
  workspace: string;
}

/** Where a tenant's uid comes from: the config (or AGENTBOX_TENANT_UID) names it, or it is derived; and where to set another. */
export interface UidSource {
  explicit: boolean;
  /** The setting that gives the tenant a uid: its config entry's "uid", or AGENTBOX_TENANT_UID for a hub's single tenant. */
  setting: string;
}

const CONFIG_UID: UidSource = { explicit: false, setting: '"uid" in its config entry' };

/** A tenant's uid another live hub gives one of its tenants. */
export class UidHeld extends Error {
  constructor(
    readonly tenant: string,
    readonly uid: number,
    readonly holder: UidHolder,
    source: UidSource,
  ) {
    super(
      `Tenant '${tenant}' would run as uid ${uid}, which another agentbox hub (pid ${holder.pid}, running since ${holder.since}) gives its ` +
        `tenant '${holder.tenant}' on the workspace ${holder.workspace}. A hub ends every process under its tenants' uids that is not its own, ` +
        "so two hubs sharing one would kill each other's servers. " +
        (source.explicit
          ? `Give '${tenant}' another uid (${source.setting}), or stop that hub.`
          : `The uid is derived from this workspace and the name '${tenant}', and the two happen to meet: give '${tenant}' a uid of its own (${source.setting}), or stop that hub.`),
    );
  }
}

const fileOf = (uid: number) => `uid-${uid}.lock`;

export class UidLocks {
  private readonly held: HeldLocks;

  constructor(
    dir: string,
    private readonly workspace: string,
  ) {
    this.held = new HeldLocks(dir);
  }

  static fileFor(dir: string, uid: number): string {
    return path.join(dir, fileOf(uid));
  }

  /** The live hub other than this one that gives `uid` to a tenant, if any. */
  holderOf(uid: number): UidHolder | undefined {
    return this.held.has(fileOf(uid)) ? undefined : liveHolder<UidHolder>(UidLocks.fileFor(this.held.dir, uid));
  }

  /** Takes `uid` for `tenant` until released or the process exits; throws UidHeld when a live hub holds it. */
  take(uid: number, tenant: string, source: UidSource = CONFIG_UID): void {
    const mine = LockFile.holder({ uid, tenant, workspace: path.resolve(this.workspace) });
    const taken = this.held.take(fileOf(uid), mine, `uid ${uid}`);
    if (taken !== true) throw new UidHeld(tenant, uid, taken.heldBy, source);
  }

  /** Takes every uid of `tenants`, or none: on a refusal what was taken is given back before UidHeld is thrown. */
  takeAll(tenants: readonly { name: string; uid: number; source: UidSource }[]): void {
    const taken: number[] = [];
    try {
      for (const t of tenants) {
        if (!this.held.has(fileOf(t.uid))) taken.push(t.uid);
        this.take(t.uid, t.name, t.source);
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
