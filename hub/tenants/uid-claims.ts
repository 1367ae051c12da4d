// A uid keeps what it owns after the hub that gave it stops: its tenant's workspace folder, with the
// agent's files in it. The uid locks (./uid-locks.ts) end with their hub, and a workspace with
// several tenants is traversable (0711) so each reaches its own folder; so a later hub on another
// workspace whose tenant met that uid (an explicit uid used twice, or two derived ones) would have
// given its agent the first tenant's files. Each uid a hub gives a tenant is therefore claimed in
// a folder for the whole machine that outlives the hub, naming the tenant, its hub's workspace and
// its folder. A tenant of another workspace, or of another name, is refused that uid while the
// claimed folder exists and belongs to the uid (a person signing in steps past it, ./people.ts); a
// claim whose folder is gone or has changed hands is stale and taken over.
import fs from "node:fs";
import path from "node:path";
import { SHARED_WRITABLE_DIRS } from "./disk-usage.js";
import { madeWritable } from "./lock-file.js";

const MACHINE_CLAIM_DIR = "/var/lib/agentbox/uid-claims";

/** Where the hubs on this machine claim uids: /var/lib/agentbox/uid-claims (root's, kept across boots), else the hub's state folder. */
export function machineClaimDir(stateDir: string): string {
  return madeWritable(MACHINE_CLAIM_DIR, 0o700) ? MACHINE_CLAIM_DIR : path.join(stateDir, "uid-claims");
}

export interface UidClaim {
  uid: number;
  tenant: string;
  /** The workspace of the hub that gave the uid. */
  workspace: string;
  /** The tenant's own folder: the workspace itself for a hub's single tenant. */
  folder: string;
  /** Its folder in its hub's state folder (home, temporary folder). */
  state?: string;
  since: string;
}

/** A tenant that asks for a uid: its name, its own folder (a claim's proof) and its state folder. */
export interface UidTenant {
  name: string;
  folder: string;
  state?: string;
}

/** Where a tenant's uid comes from: the config (or AGENTBOX_TENANT_UID) names it, or it is derived; and where to set another. */
export interface UidSource {
  explicit: boolean;
  /** The setting that gives the tenant a uid: its config entry's "uid", or AGENTBOX_TENANT_UID for a hub's single tenant. */
  setting: string;
}

export const CONFIG_UID: UidSource = { explicit: false, setting: '"uid" in its config entry' };

/** A tenant's uid another tenant still has: a live hub gives it (./uid-locks.ts), or its files are another tenant's. */
export class UidTaken extends Error {
  constructor(
    readonly tenant: string,
    readonly uid: number,
    why: string,
    source: UidSource,
    otherwise: string,
  ) {
    super(
      `Tenant '${tenant}' would run as uid ${uid}, ${why} ` +
        (source.explicit
          ? `Give '${tenant}' another uid (${source.setting}), or ${otherwise}.`
          : `The uid is derived from this workspace and the name '${tenant}', and the two happen to meet: give '${tenant}' a uid of its own (${source.setting}), or ${otherwise}.`),
    );
  }
}

/** A tenant's uid that owns another tenant's folder, kept from an earlier run of some hub. */
export class UidOwned extends UidTaken {
  constructor(
    tenant: string,
    uid: number,
    readonly claim: UidClaim,
    source: UidSource,
  ) {
    super(
      tenant,
      uid,
      `which owns the folder ${claim.folder} of tenant '${claim.tenant}' (workspace ${claim.workspace}, given that uid ${claim.since}): ` +
        "its processes could read and change those files.",
      source,
      `remove the folder or give it to root (chown root: ${claim.folder}) if that tenant is gone for good`,
    );
  }
}

const fileOf = (uid: number) => `uid-${uid}.json`;

function claimIn(file: string): UidClaim | undefined {
  try {
    const claim = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<UidClaim>;
    const named = [claim.tenant, claim.workspace, claim.folder, claim.since].every((v) => typeof v === "string");
    const state = claim.state === undefined || typeof claim.state === "string";
    return named && state && Number.isSafeInteger(claim.uid) ? (claim as UidClaim) : undefined;
  } catch {
    return undefined; // none, or unreadable: nothing to honour
  }
}

/** Whether `folder` is still there and `uid`'s: a claim's proof that its files are still the uid's. */
function stillOwned(folder: string, uid: number): boolean {
  const st = statOf(folder);
  return st !== undefined && st.isDirectory() && st.uid === uid;
}

/** Gives `entry` to root, a folder with mode 0700: kept for the operator, out of reach of the uid's next tenant. */
function close(entry: string, st: fs.Stats): void {
  fs.lchownSync(entry, 0, 0);
  if (st.isDirectory()) fs.chmodSync(entry, 0o700);
}

/**
 * Closes what a gone tenant left outside its workspace folder: its state folder (home, temporary folder) unless it is
 * the new tenant's own too, and what its uid owns at the top of the shared writable folders (/tmp and the like; no
 * process of the uid runs now, so all of it is the gone tenant's). Returns what it closed.
 */
function lockAway(gone: UidClaim, ownState: string | undefined): string[] {
  // a tenant never runs as root or as the hub: such a claim is no tenant's, and closing what they own would break the machine
  if (gone.uid === 0 || gone.uid === process.getuid?.()) return [];
  const closed: string[] = [];
  if (gone.state && gone.state !== ownState) {
    const st = statOf(gone.state);
    if (st?.isDirectory() && (st.uid !== 0 || (st.mode & 0o077) !== 0)) {
      close(gone.state, st);
      closed.push(gone.state);
    }
  }
  for (const dir of SHARED_WRITABLE_DIRS) {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      continue; // not on this machine
    }
    for (const name of names) {
      const entry = path.join(dir, name);
      const st = statOf(entry);
      if (st?.uid !== gone.uid) continue;
      close(entry, st);
      closed.push(entry);
    }
  }
  return closed;
}

function statOf(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch {
    return undefined;
  }
}

export class UidClaims {
  constructor(
    readonly dir: string,
    private readonly workspace: string,
  ) {}

  static fileFor(dir: string, uid: number): string {
    return path.join(dir, fileOf(uid));
  }

  /** The claim on `uid` of a tenant other than `tenant` of this workspace whose folder the uid still owns, if any. */
  otherOwner(uid: number, tenant: string): UidClaim | undefined {
    const claim = claimIn(UidClaims.fileFor(this.dir, uid));
    if (!claim || claim.uid !== uid || this.isMine(claim, tenant)) return undefined;
    return stillOwned(claim.folder, uid) ? claim : undefined;
  }

  /**
   * Claims `uid` for `tenant`, once otherOwner found no other tenant's claim that stands. A stale claim of another
   * tenant is taken over, and what that tenant left outside its workspace folder is closed (lockAway) and returned.
   * The claim is written beside its file and renamed into place, never read half written.
   */
  record(uid: number, tenant: UidTenant): string[] {
    const file = UidClaims.fileFor(this.dir, uid);
    const claim: UidClaim = {
      uid,
      tenant: tenant.name,
      workspace: path.resolve(this.workspace),
      folder: path.resolve(tenant.folder),
      ...(tenant.state ? { state: path.resolve(tenant.state) } : {}),
      since: new Date().toISOString(),
    };
    const found = claimIn(file);
    if (found && this.isMine(found, tenant.name) && found.folder === claim.folder && found.state === claim.state) return [];
    const lockedAway = found && !this.isMine(found, tenant.name) ? lockAway(found, claim.state) : [];
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const written = `${file}.${process.pid}`;
    fs.writeFileSync(written, JSON.stringify(claim), { mode: 0o600 });
    fs.renameSync(written, file);
    return lockedAway;
  }

  private isMine(claim: UidClaim, tenant: string): boolean {
    return claim.workspace === path.resolve(this.workspace) && claim.tenant === tenant;
  }
}
