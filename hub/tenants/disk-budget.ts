// A disk budget per tenant, without mounts or quotas (Docker's default capabilities allow neither).
// Every tenant process starts with RLIMIT_FSIZE = the budget, so no single file outgrows it. The
// hub measures what each tenant's uid owns (hub/tenants/disk-usage.ts) every few seconds and publishes it
// for the tenant's servers; a tenant at or over its budget is frozen: the soft RLIMIT_FSIZE of all
// its processes drops to 0, so every write that would extend a file fails (EFBIG, or SIGXFSZ,
// which kills a process that does not ignore it), until deletions bring it under budget again.
// The limits are changed by a helper running as the tenant's uid (prlimit(2) on a process of the
// same uid needs no capability), which may lower a hard limit but never raise one: so the hard
// limit stays the budget and only the soft one moves. A tenant process can raise its own soft limit
// back; one found doing so while frozen is killed, and so is every command of a frozen tenant whose
// use still grows (what the limit cannot see: fallocate --keep-size, new folders, empty files);
// the tenant is then locked (hard limits 0 as well) until it is under budget, when its servers
// restart to get their limit back. Holding and thawing a frozen tenant is hub/tenants/frozen-tenant.ts.
import type { Logger } from "../../servers/lib/log.js";
import type { DiskReserve } from "./disk-reserve.js";
import { freeOn, freeSpaceByFilesystem, measureUsage, SHARED_WRITABLE_DIRS, walkRoots, type DiskUsage, type Free } from "./disk-usage.js";
import { FROZEN_GROWTH_BYTES, FrozenTenant, mib, type BudgetedTenant, type TenantCommand } from "./frozen-tenant.js";
import { otherFilesystems, sharesOf, sizeOn, type FilesystemShares } from "./filesystem-shares.js";
import { publishForTenant } from "./tenant-status.js";
import type { DiskUse } from "../../servers/lib/disk-budget.js";
import type { Tenant } from "./tenants.js";

const MIN_INTERVAL_MS = 2_000;
// a long walk is repeated less often: measuring takes at most a tenth of a core, or half a core while
// the disk fills past a tenant's room (a tenant holding many files makes every walk long)
const WALK_SHARE = 10;
const FILLING_WALK_SHARE = 1;
const WALK_TIMEOUT_MS = 120_000;
// between measurements the free space of the tenants' filesystems is watched this often (statfs,
// no walk): a drop larger than the least room a tenant has left measures at once
const WATCH_EVERY_MS = 250;
const WATCH_MIN_DROP_BYTES = 4 * 1024 * 1024;
// the periodic walk is skipped while every filesystem has as much free as at the last one (within
// these), so an idle hub does not walk every 2 s; still at least this often, since one tenant can
// write what another deletes meanwhile
const QUIET_BYTES = 1024 * 1024;
const QUIET_INODES = 64;
const QUIET_MAX_MS = 30_000;

export type { BudgetedTenant } from "./frozen-tenant.js";

/** How the disk is read: a walk of the roots for the uids' use, and what is free on a folder's filesystem (disk-usage.ts; a test's own stand in). */
export interface DiskProbes {
  walk(roots: string[], uids: number[], timeoutMs: number): Promise<DiskUsage>;
  freeOn(dir: string): Promise<Free | undefined>;
  /** The size of a folder's filesystem (by default statfs). */
  sizeOn?(dir: string): Promise<number | undefined>;
}

interface TenantState {
  usedBytes?: number;
  /** The least room it had left on a filesystem other than its workspace's, at the last measurement. */
  filesystemRoomBytes?: number;
  /** Set while the tenant is over its budget. */
  frozen?: FrozenTenant;
}

export class DiskBudgets {
  private readonly states = new Map<BudgetedTenant, TenantState>();
  private timer?: NodeJS.Timeout;
  private watchTimer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  /** One folder per filesystem the tenants write to, with what was free on it when the last pass began. */
  private freeAtPass = new Map<string, Free>();
  private lastPass = { endedAt: 0, durationMs: 0 };
  /** While a tenant is frozen: the most free bytes seen per filesystem since its processes were last checked. */
  private freeAtCheck = new Map<string, number>();
  private lastCheck = { endedAt: 0, durationMs: 0 };
  private checking = false;
  private reserve?: DiskReserve;
  private tending = false;

  constructor(
    private readonly tenants: BudgetedTenant[],
    private readonly log: Logger,
    private readonly commandFor: TenantCommand,
    private readonly probes: DiskProbes = { walk: measureUsage, freeOn },
  ) {
    for (const tenant of tenants) if (tenant.identity) this.states.set(tenant, {});
  }

  /** `expectMore`: tenants come later (people signing in, ./people.ts), so budgets are kept even with none yet. */
  start(reserve?: DiskReserve, expectMore = false): void {
    if (this.states.size === 0 && !expectMore) return;
    this.reserve = reserve;
    void this.measureNow().then(() => this.tendReserve());
    this.watchTimer = setInterval(() => void this.watch(), WATCH_EVERY_MS);
    this.watchTimer.unref();
  }

  /** A tenant made while the hub runs (a person's first sign-in): measured from the next pass on, which starts now. */
  add(tenant: BudgetedTenant): void {
    if (!tenant.identity || this.states.has(tenant)) return;
    this.states.set(tenant, {});
    void this.measureNow();
  }

  /** A tenant no longer served (a person's, dropped for idling): no longer measured; its files count again when its person is back. */
  remove(tenant: BudgetedTenant): void {
    this.states.delete(tenant);
  }

  /** Free the reserve when the filesystem is nearly full, after freezing whoever filled it; take it back once there is room. */
  private async tendReserve(): Promise<void> {
    const reserve = this.reserve;
    if (!reserve || this.tending) return;
    this.tending = true;
    try {
      const free = await reserve.freeNow();
      const action = free === undefined ? undefined : reserve.needs(free);
      if (action === "release") {
        await this.running; // a pass under way may have begun before the disk filled
        await this.measureNow();
        reserve.release();
        this.log.warn("the disk is nearly full: released the hub's reserve so the other tenants can still write", {
          reservedMiB: mib(reserve.bytes),
          freeMiB: mib(free!),
        });
      } else if (action === "hold" && !this.stopped && ![...this.states.keys()].some((t) => t.identity!.disk.frozen)) {
        await reserve.hold();
      }
    } finally {
      this.tending = false;
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.watchTimer);
    this.reserve?.release();
  }

  private async watch(): Promise<void> {
    await this.tendReserve();
    const frozen = [...this.states.values()].flatMap((state) => state.frozen ?? []);
    if (frozen.length === 0) this.freeAtCheck.clear();
    const mayWalk = !this.running && Date.now() >= this.lastPass.endedAt + this.lastPass.durationMs * FILLING_WALK_SHARE;
    if (frozen.length === 0 && !mayWalk) return;
    const free = await this.freeNow();
    if (frozen.length) void this.checkFrozen(frozen, free);
    if (mayWalk) this.measureIfFilling(free);
  }

  /**
   * A fast writer can outrun the periodic measurement; the filesystem's free space shows it at
   * once. Measure now when it fell by more than the least room any tenant had left (within half a
   * core: a walk is then at most as long as the pause before it).
   */
  private measureIfFilling(free: Map<string, Free>): void {
    const rooms = [...this.states].flatMap(([t, state]) =>
      state.usedBytes === undefined || t.identity!.disk.frozen
        ? []
        : [Math.min(t.identity!.disk.budgetBytes - state.usedBytes, state.filesystemRoomBytes ?? Infinity)],
    );
    const drop = Math.max(WATCH_MIN_DROP_BYTES, rooms.length ? Math.min(...rooms) : 0);
    for (const [dir, before] of this.freeAtPass) if (before.bytes - (free.get(dir)?.bytes ?? before.bytes) >= drop) return void this.measureNow();
  }

  /**
   * A frozen tenant that raised its soft limit back writes until it is found; its writes show in
   * the free space at once, and finding it needs no walk: check the frozen tenants' processes
   * when the disk filled since the last check (within a tenth of a core, as the walks).
   */
  private async checkFrozen(frozen: FrozenTenant[], free: Map<string, Free>): Promise<void> {
    for (const [dir, { bytes }] of free) this.freeAtCheck.set(dir, Math.max(bytes, this.freeAtCheck.get(dir) ?? bytes));
    const filled = [...free].some(([dir, { bytes }]) => this.freeAtCheck.get(dir)! - bytes >= FROZEN_GROWTH_BYTES);
    if (!filled || this.checking || Date.now() < this.lastCheck.endedAt + this.lastCheck.durationMs * WALK_SHARE) return;
    this.checking = true;
    const started = Date.now();
    this.freeAtCheck = new Map([...free].map(([dir, { bytes }]) => [dir, bytes]));
    try {
      for (const tenant of frozen) await tenant.check();
    } catch (err) {
      this.log.warn("checking frozen tenants' file size limits failed; trying again when the disk fills", { err: String(err) });
    } finally {
      this.checking = false;
      this.lastCheck = { endedAt: Date.now(), durationMs: Date.now() - started };
    }
  }

  /** What a tenant used at the last measurement, and its budget (undefined: no budget in this isolation mode). */
  usage(tenant: Tenant): { usedBytes?: number; budgetBytes: number; frozen: boolean } | undefined {
    const disk = tenant.identity?.disk;
    const state = [...this.states].find(([t]) => t.name === tenant.name)?.[1];
    return disk && state ? { usedBytes: state.usedBytes, budgetBytes: disk.budgetBytes, frozen: disk.frozen } : undefined;
  }

  /** Settles once no measurement is under way (at once when none is). */
  settled(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  /** Measure every tenant now (joining a measurement under way), then enforce the budgets. */
  measureNow(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<void> {
    clearTimeout(this.timer);
    const started = Date.now();
    try {
      const tenants = [...this.states.keys()];
      const roots = walkRoots([...tenants.flatMap((t) => [t.workspace, t.home!, t.tmp!]), ...SHARED_WRITABLE_DIRS]);
      this.freeAtPass = await freeSpaceByFilesystem(roots, this.probes.freeOn);
      const usage = await this.probes.walk(
        roots,
        tenants.map((t) => t.identity!.uid),
        WALK_TIMEOUT_MS,
      );
      const others = await otherFilesystems(roots, tenants, this.probes.sizeOn ?? sizeOn);
      if (usage.partial)
        this.log.warn("measuring tenants' disk use was cut short: those it found over budget are frozen, the others keep their last numbers", {
          afterMs: WALK_TIMEOUT_MS,
        });
      for (const tenant of tenants) {
        if (!this.states.has(tenant)) continue; // removed while measured
        const uid = tenant.identity!.uid;
        const used = usage.bytes.get(uid) ?? 0;
        try {
          const shares = await sharesOf(tenant, usage.byDevice?.get(uid), others);
          // a walk cut short counts at least what a tenant uses: enough to freeze it, never to thaw it
          // (a frozen one is still held) nor to replace its last numbers
          if (usage.partial && used < tenant.identity!.disk.budgetBytes && !shares.full) await this.states.get(tenant)?.frozen?.measured(undefined);
          else await this.enforce(tenant, used, shares, usage.partial);
          const preallocated = usage.preallocated.get(uid);
          const frozen = this.states.get(tenant)?.frozen;
          if (frozen && preallocated) await frozen.freePreallocated(preallocated);
        } catch (err) {
          this.log.warn("enforcing a tenant's disk budget failed; trying again at the next measurement", { tenant: tenant.name, err: String(err) });
        }
      }
    } catch (err) {
      this.log.warn("measuring tenants' disk use failed; keeping the last numbers", { err: String(err) });
    }
    this.lastPass = { endedAt: Date.now(), durationMs: Date.now() - started };
    if (this.stopped) return;
    this.measureLater(this.lastPass.endedAt);
  }

  /** The next periodic pass, unless nothing changed since the last walk (which ended at `walkedAt`). */
  private measureLater(walkedAt: number): void {
    if (this.stopped) return;
    const due = async () => {
      if (this.stopped || this.running) return;
      if (Date.now() - walkedAt < QUIET_MAX_MS && (await this.quietSincePass())) return this.measureLater(walkedAt);
      await this.measureNow();
    };
    this.timer = setTimeout(() => void due(), Math.max(MIN_INTERVAL_MS, this.lastPass.durationMs * WALK_SHARE));
    this.timer.unref();
  }

  /** What is free now on each filesystem the last pass found (one that cannot be read is left out). */
  private async freeNow(): Promise<Map<string, Free>> {
    const free = new Map<string, Free>();
    for (const dir of this.freeAtPass.keys()) {
      const now = await this.probes.freeOn(dir);
      if (now) free.set(dir, now);
    }
    return free;
  }

  /** No tenant frozen (one deleting files is to be let write again soon) and no filesystem's free space changed since the last pass began. */
  private async quietSincePass(): Promise<boolean> {
    if ([...this.states.values()].some((state) => state.frozen) || this.freeAtPass.size === 0) return false;
    const free = await this.freeNow();
    for (const [dir, before] of this.freeAtPass) {
      const now = free.get(dir);
      if (!now || Math.abs(now.bytes - before.bytes) >= QUIET_BYTES || Math.abs(now.inodes - before.inodes) >= QUIET_INODES) return false;
    }
    return true;
  }

  private async enforce(tenant: BudgetedTenant, usedBytes: number, shares: FilesystemShares, partial = false): Promise<void> {
    const state = this.states.get(tenant)!;
    const disk = tenant.identity!.disk;
    const { full } = shares;
    state.usedBytes = usedBytes;
    state.filesystemRoomBytes = shares.roomBytes;
    try {
      publishForTenant(tenant.diskStatus!, { usedBytes, budgetBytes: disk.budgetBytes, ...(full ? { full } : {}) } satisfies DiskUse);
    } catch (err) {
      // a full disk must not stop the enforcement: the kernel's limit does not need this file
      this.log.warn("publishing a tenant's disk use failed", { tenant: tenant.name, err: String(err) });
    }
    const over = usedBytes >= disk.budgetBytes || full !== undefined;
    if (over && !state.frozen) {
      disk.frozen = true;
      state.frozen = new FrozenTenant(tenant, partial ? undefined : usedBytes, this.commandFor, this.log);
      this.log.warn(
        full
          ? `tenant's share of the filesystem holding ${full.folders.join(", ")} used up: its writes are refused until it deletes files there`
          : "tenant's disk budget used up: its writes are refused until it deletes files",
        {
          tenant: tenant.name,
          usedMiB: mib(usedBytes),
          budgetMiB: mib(disk.budgetBytes),
          ...(full ? { usedThereMiB: mib(full.usedBytes), shareThereMiB: mib(full.shareBytes) } : {}),
        },
      );
    } else if (!over && state.frozen) {
      await state.frozen.end(usedBytes);
      state.frozen = undefined;
      return;
    }
    await state.frozen?.measured(partial ? undefined : usedBytes);
  }
}
