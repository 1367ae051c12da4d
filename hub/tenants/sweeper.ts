// Processes that escaped their server. A command can daemonize (setsid, double fork, `env -i`) and
// so leave the tree its server kills when a session ends. Under per-tenant uids every process of a
// tenant's uid is either below one of the tenant's servers (from the moment a server is spawned,
// so one that is slow to start is never taken for an escapee) or an escapee; escapees live only
// while the session their claim names lives (servers/lib/session-claim.ts). Nothing of a
// tenant outlives the hub: what an earlier run left is killed before the hub listens, and all of
// it when the hub stops. The same goes for the IPC objects its processes leave in the kernel
// (./ipc-objects.ts) and its files in /dev/shm (./shm-files.ts), removed once the tenant has no live
// session, and while it has one, what is beyond its share; its processes are stopped meanwhile
// (./tenant-pause.ts).
//
// A sweep reads the process table a slice at a time and the claims off the event loop, a bounded
// number of claims per tenant per sweep, and never runs twice at once: however many processes a
// tenant keeps, other tenants' calls go on being served.
import { descendantsOf, listOwners, type ProcOwner } from "../../servers/lib/proc-table.js";
import { signal } from "../../servers/lib/proctree.js";
import { sessionClaim } from "../../servers/lib/session-claim.js";
import { errorMessage, type Logger } from "../../servers/lib/log.js";
import { runningServers, type ServedTenant } from "./served-tenant.js";
import { readClaims, type TenantCommand } from "./process-claims.js";
import { IPC_SHARES, ipcObjectsOf, MQUEUE_DIR, overShare, ownedBy, queuesVisible, removeIpcObjects, type IpcObject } from "./ipc-objects.js";
import { SHM_DIR, sweepShmFiles } from "./shm-files.js";
import { whileStopped } from "./tenant-pause.js";
import { MemoryGuard } from "./memory-guard.js";
import type { Clock, Timer } from "../protocol/clock.js";

/** What a sweep reads of a live client session: whose it is, and the token its claim is made from. */
export interface ClaimingSession {
  readonly tenant: ServedTenant;
  readonly token: string;
}

/** The live client sessions (the session registry, seen from below it). */
export interface LiveSessions {
  all(): readonly ClaimingSession[];
}

// after a session ends its servers kill what they know of; the sweep then takes what is left
const AFTER_SESSION_END_MS = [1_000, 3_000];
// claims read per tenant per sweep; a tenant with more escapees has the rest read in later sweeps
const CLAIMS_PER_SWEEP = 1_000;
// a stopped process cannot fork: stop everything, look again, kill; repeat until nothing is left
const KILL_ROUNDS = 20;

export interface SweeperOptions {
  /** How often the periodic sweep runs (it also runs twice after a session ends). */
  everyMs?: number;
  /** Where POSIX message queues are listed (./ipc-objects.ts). */
  queueDir?: string;
  /** Where POSIX shared memory and semaphores are files (./shm-files.ts). */
  shmDir?: string;
  /** The memory kept free by ending a tenant's processes (./memory-guard.ts); undefined: its default. */
  memoryReserveMiB?: number | "off";
}

export class ProcessSweeper {
  private timer?: Timer;
  /** The sweep under way; tenants asked for meanwhile wait in `pending` for the next one. */
  private running?: Promise<void>;
  private readonly pending = new Set<ServedTenant>();
  /** Where each tenant's next bounded read of claims starts. */
  private readonly cursor = new WeakMap<ServedTenant, number>();
  private readonly claims = new WeakMap<ClaimingSession, string>();

  constructor(
    private readonly tenants: ServedTenant[],
    private readonly sessions: LiveSessions,
    private readonly log: Logger,
    private readonly commandFor: (tenant: ServedTenant) => TenantCommand,
    /** When sweeps run: every `everyMs`, and twice after a session ends. */
    private readonly clock: Clock,
    options: SweeperOptions = {},
  ) {
    this.everyMs = options.everyMs ?? 5_000;
    this.queueDir = options.queueDir ?? MQUEUE_DIR;
    this.shmDir = options.shmDir ?? SHM_DIR;
    const reserve = options.memoryReserveMiB;
    this.memory = reserve === "off" ? undefined : new MemoryGuard(tenants, log, clock, reserve && reserve * 1024 * 1024);
  }

  private readonly memory?: MemoryGuard;

  private readonly everyMs: number;
  private readonly queueDir: string;
  private readonly shmDir: string;

  /** `expectMore`: tenants come later (people signing in, ./people.ts) into the same list, so sweeps run even with none yet. */
  start(expectMore = false): void {
    if (!expectMore && !this.tenants.some((t) => t.identity)) return;
    if (!queuesVisible(this.queueDir))
      this.log.warn(
        `tenants' POSIX message queues cannot be listed, so they outlive their sessions and one tenant can take all the machine has (256 by default): ${this.queueDir} is not mounted. Mount it (mount -t mqueue none ${this.queueDir}; Docker does in every container).`,
      );
    this.timer = this.clock.every(this.everyMs, () => void this.sweep(this.tenants));
    this.memory?.start();
  }

  /** Stop sweeping; settles once a sweep under way has finished. */
  async stop(): Promise<void> {
    this.timer?.cancel();
    this.memory?.stop();
    this.pending.clear();
    await this.running;
  }

  /** Tenants with sweeps after a session end pending: sessions ending meanwhile share them. */
  private readonly afterEndPending = new Set<ServedTenant>();

  sessionEnded(session: ClaimingSession): void {
    const tenant = session.tenant;
    // one pending pair of sweeps per tenant, however many sessions end (1,200 closures were 2,400 sweeps of /proc)
    if (!tenant.identity || this.afterEndPending.has(tenant)) return;
    this.afterEndPending.add(tenant);
    const [first, second] = AFTER_SESSION_END_MS;
    this.clock.after(first, () => {
      void this.sweep([tenant]);
      this.clock.after(second - first, () => {
        this.afterEndPending.delete(tenant);
        void this.sweep([tenant]);
      });
    });
  }

  /** Sweep these tenants: now, or right after the sweep under way (never two at once). Settles when done. */
  sweep(tenants: ServedTenant[]): Promise<void> {
    for (const tenant of tenants) if (tenant.identity) this.pending.add(tenant);
    this.running ??= this.sweepPending().finally(() => (this.running = undefined));
    return this.running;
  }

  private async sweepPending(): Promise<void> {
    while (this.pending.size > 0) {
      const tenants = [...this.pending];
      this.pending.clear();
      try {
        const procs = await listOwners();
        const ipc = await ipcObjectsOf(new Set(tenants.map((t) => t.identity!.uid)), { queueDir: this.queueDir });
        for (const tenant of tenants) {
          await this.sweepTenant(tenant, procs);
          await this.removeIpc(tenant, ipc);
        }
        await this.removeShmFiles(tenants);
        // what shows that sweeps ran (and found nothing to kill): a test waits on it rather than on time
        this.log.debug("process sweep done", { tenants: tenants.length });
      } catch (err) {
        this.log.warn("process sweep failed", { error: errorMessage(err) });
      }
    }
  }

  /** The tenant's servers (starting ones included: their pid is known at spawn) and everything below them. */
  private spared(tenant: ServedTenant, procs: ProcOwner[]): Set<number> {
    const kept = new Set<number>();
    for (const child of runningServers(tenant)) {
      if (!child.pid) continue;
      kept.add(child.pid);
      for (const p of descendantsOf(child.pid, procs)) kept.add(p.pid);
    }
    return kept;
  }

  /** Kill the tenant's processes that are below none of its servers and claim no live session of it. */
  private async sweepTenant(tenant: ServedTenant, procs: ProcOwner[]): Promise<void> {
    const uid = tenant.identity!.uid;
    const kept = this.spared(tenant, procs);
    const escaped = procs.filter((p) => p.uid === uid && p.state !== "Z" && !kept.has(p.pid)).map((p) => p.pid);
    if (escaped.length === 0) return;
    const batch = this.nextBatch(tenant, escaped);
    const claims = await readClaims(batch, this.commandFor(tenant));
    const live = new Set(
      this.sessions
        .all()
        .filter((s) => s.tenant === tenant)
        .map((s) => this.claimOf(s)),
    );
    // a server (re)started while the claims were read is spared too
    const startedSince = new Set(runningServers(tenant).flatMap((c) => (c.pid ? [c.pid] : [])));
    let killed = 0;
    for (const pid of batch) {
      const claim = claims.get(pid);
      if ((claim !== undefined && live.has(claim)) || startedSince.has(pid)) continue;
      if (signal(pid, "SIGKILL")) killed++;
    }
    if (killed) this.log.info("killed processes that outlived their session", { tenant: tenant.name, count: killed });
  }

  /** Remove the tenant's IPC objects once it has no live session (nothing then works with them), and any beyond its share. */
  private async removeIpc(tenant: ServedTenant, ipc: IpcObject[]): Promise<void> {
    const own = ownedBy(ipc, tenant.identity!.uid);
    if (own.length === 0) return;
    const remove = (objects: IpcObject[]) => whileStopped(tenant.identity!.uid, () => removeIpcObjects(objects, this.commandFor(tenant)));
    if (!this.sessions.all().some((s) => s.tenant === tenant)) {
      await remove(own);
      this.log.info("removed IPC objects its sessions left", { tenant: tenant.name, ...ipcSummary(own) });
      return;
    }
    const over = overShare(own);
    if (over.length === 0) return;
    await remove(over);
    this.log.warn("removed IPC objects beyond the tenant's share (the newest of each kind)", {
      tenant: tenant.name,
      shares: IPC_SHARES,
      ...ipcSummary(over),
    });
  }

  /** Remove the tenants' files in /dev/shm: all of them once a tenant has no live session (or `why` the hub says), else any beyond its share. */
  private async removeShmFiles(tenants: ServedTenant[], why?: string): Promise<void> {
    const live = new Set(this.sessions.all().map((s) => s.tenant));
    const removals = await sweepShmFiles(
      tenants.flatMap((t) =>
        t.identity
          ? [{ name: t.name, uid: t.identity.uid, shareBytes: t.identity.sharedMemoryBytes, live: !why && live.has(t), asTenant: this.commandFor(t) }]
          : [],
      ),
      this.shmDir,
    );
    for (const { tenant, live, entries, heldBytes, shareBytes } of removals) {
      const what = { tenant, entries, heldBytes };
      if (why) this.log.warn(`removed tenant files in ${this.shmDir} ${why}`, what);
      else if (live) this.log.warn(`removed files in ${this.shmDir} beyond the tenant's share (the newest)`, { ...what, shareBytes });
      else this.log.info(`removed files in ${this.shmDir} its sessions left`, what);
    }
  }

  /** At most CLAIMS_PER_SWEEP of the escapees, taking turns across sweeps. */
  private nextBatch(tenant: ServedTenant, escaped: number[]): number[] {
    if (escaped.length <= CLAIMS_PER_SWEEP) return escaped;
    const from = (this.cursor.get(tenant) ?? 0) % escaped.length;
    this.cursor.set(tenant, from + CLAIMS_PER_SWEEP);
    return [...escaped, ...escaped].slice(from, from + CLAIMS_PER_SWEEP);
  }

  private claimOf(session: ClaimingSession): string {
    let claim = this.claims.get(session);
    if (!claim) this.claims.set(session, (claim = sessionClaim(session.token)));
    return claim;
  }

  /**
   * Kill every process of every tenant's uid, logging what was killed and why: before the hub
   * listens (what an earlier run left, which could hold the hub's port) and after its servers
   * stopped. Only while no server of a tenant runs: nothing of a tenant's uid is then the hub's.
   */
  async killAll(why: string): Promise<void> {
    const owners = new Map(this.tenants.flatMap((t) => (t.identity ? [[t.identity.uid, t.name] as const] : [])));
    if (owners.size === 0) return;
    const killed = new Map<string, Set<number>>();
    for (let round = 0; round < KILL_ROUNDS; round++) {
      const found = (await listOwners()).filter((p) => owners.has(p.uid) && p.state !== "Z");
      if (found.length === 0) break;
      for (const p of found) signal(p.pid, "SIGSTOP");
      const stopped = (await listOwners()).filter((p) => owners.has(p.uid) && p.state !== "Z");
      for (const p of [...found, ...stopped]) {
        if (!signal(p.pid, "SIGKILL")) continue;
        const tenant = owners.get(p.uid)!;
        if (!killed.has(tenant)) killed.set(tenant, new Set());
        killed.get(tenant)!.add(p.pid);
      }
      // a bounded poll: these are not the hub's children, so no exit event comes; the next round's
      // listing is the check
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const [tenant, pids] of killed) this.log.warn(`killed tenant processes ${why}`, { tenant, count: pids.size, pids: [...pids].slice(0, 20) });
    const ipc = await ipcObjectsOf(new Set(owners.keys()), { queueDir: this.queueDir });
    for (const tenant of this.tenants) {
      const own = tenant.identity ? ownedBy(ipc, tenant.identity.uid) : [];
      if (own.length === 0) continue;
      await removeIpcObjects(own, this.commandFor(tenant));
      this.log.warn(`removed tenant IPC objects ${why}`, { tenant: tenant.name, ...ipcSummary(own) });
    }
    await this.removeShmFiles(this.tenants, why);
  }
}

/** What a log line says of removed IPC objects: how many of each kind, and the shared memory they held. */
function ipcSummary(objects: readonly IpcObject[]): Record<string, number> {
  const count = (kind: IpcObject["kind"]) => objects.filter((o) => o.kind === kind).length;
  return {
    sharedMemory: count("shm"),
    semaphoreSets: count("sem"),
    messageQueues: count("msg"),
    posixMessageQueues: count("mqueue"),
    bytes: objects.reduce((sum, o) => sum + o.bytes, 0),
  };
}
