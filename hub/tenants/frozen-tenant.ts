// Holding a tenant over its disk budget (hub/tenants/disk-budget.ts): every process of it at a soft
// RLIMIT_FSIZE of 0, and whatever lifts that again killed. Reading and changing limits needs no
// walk of the disk, so besides after each measurement the hold is checked whenever the disk fills
// between them: a walk can take many seconds on a busy machine, and a tenant that raised its soft
// limit back would write at the disk's speed until the next one ended.
import { execFile } from "node:child_process";
import fs from "node:fs";
import { promisify } from "node:util";
import type { Logger } from "../../servers/lib/log.js";
import { listOwners, readProcAsync, ticksSinceBoot } from "../../servers/lib/proc-table.js";
import { killTree, signal } from "../../servers/lib/proctree.js";
import { SHARED_WRITABLE_DIRS } from "./disk-usage.js";
import { fileSizeLimit } from "./isolation.js";
import { whileStopped } from "./tenant-pause.js";
import type { Tenant } from "./tenants.js";

const run = promisify(execFile);
// while frozen, use may still grow a little (a folder's block): more than this is an evasion
export const FROZEN_GROWTH_BYTES = 1024 * 1024;
/** Bytes in whole MiB, as the budget's log lines give them. */
export const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);
const MAX_TRUNCATED_PER_PASS = 200;
const TRUNCATE_TIMEOUT_MS = 120_000;

export interface BudgetedTenant extends Tenant {
  readonly children: ReadonlyArray<{ readonly pid?: number }>;
  /** Its sessions' own server instances (hub/children/session-instances.ts): servers as much as the children. */
  readonly instances?: { running(): ReadonlyArray<{ readonly pid?: number }> };
}

const serversOf = (tenant: BudgetedTenant) => [...tenant.children, ...(tenant.instances?.running() ?? [])];

/** The command line that runs a program as this tenant (tenants.ts tenantCommand). */
export type TenantCommand = (tenant: BudgetedTenant, command: string, args: string[]) => { command: string; args: string[] };

/** A process's RLIMIT_FSIZE from /proc (readable by anyone), or undefined when it is gone. */
async function fileSizeOf(pid: number): Promise<{ soft: number; hard: number } | undefined> {
  try {
    const limits = /^Max file size\s+(\S+)\s+(\S+)/m.exec(await fs.promises.readFile(`/proc/${pid}/limits`, "utf8"));
    const bytes = (v: string) => (v === "unlimited" ? Infinity : Number(v));
    return limits ? { soft: bytes(limits[1]), hard: bytes(limits[2]) } : undefined;
  } catch {
    return undefined;
  }
}

/** A slice at a time, as the sweep reads them: a tenant decides how many processes it has. */
async function processesOf(tenant: BudgetedTenant): Promise<number[]> {
  const uid = tenant.identity!.uid;
  return (await listOwners()).filter((p) => p.state !== "Z" && p.uid === uid).map((p) => p.pid);
}

/** Set RLIMIT_FSIZE ("soft:hard") of some of the tenant's processes, as the tenant (see disk-budget.ts). */
async function setLimit(tenant: BudgetedTenant, pids: number[], limit: string, commandFor: TenantCommand, log: Logger): Promise<void> {
  if (pids.length === 0) return;
  // one process at a time: a pid that has exited meanwhile must not stop the others
  const script = `for p; do prlimit --pid "$p" --fsize=${limit} 2>/dev/null; done; exit 0`;
  const { command, args } = commandFor(tenant, "sh", ["-c", script, "sh", ...pids.map(String)]);
  await run(command, args, { timeout: 30_000 }).catch((err) =>
    log.warn("changing a tenant's file size limit failed", { tenant: tenant.name, err: String(err) }),
  );
}

/** A tenant over its budget, from the measurement that found it so until one finds it under again. */
export class FrozenTenant {
  /** The lowest use measured since the freeze (deleting and then writing again also counts as growth). */
  private lowestBytes: number;
  private measurements = 0;
  /** Pids seen at a soft limit of 0 (or lowered to it) at the last hold: one above 0 again raised it. */
  private atZero = new Set<number>();
  /** When the first hold had lowered everything (ticks since boot): a process started later inherits 0 unless it, or a parent, raised it. */
  private loweredAt?: number;
  private holding?: Promise<void>;
  private ended = false;

  /** `usedBytes` undefined: found over budget by a walk cut short, which counts too little to compare a later one with. */
  constructor(
    private readonly tenant: BudgetedTenant,
    usedBytes: number | undefined,
    private readonly commandFor: TenantCommand,
    private readonly log: Logger,
  ) {
    this.lowestBytes = usedBytes ?? Infinity;
  }

  /** After a measurement: hold, and kill every command when the tenant's use still grows (undefined: a walk cut short, growth unknown). */
  async measured(usedBytes: number | undefined): Promise<void> {
    await this.settled();
    if (usedBytes !== undefined) this.lowestBytes = Math.min(this.lowestBytes, usedBytes);
    const grows = usedBytes !== undefined && usedBytes > this.lowestBytes + FROZEN_GROWTH_BYTES;
    let killed = false;
    await this.serve(async () => void (killed = await this.hold(grows ? usedBytes : undefined)));
    // measured from here on: what grew before the kill is not growth again
    if (killed && usedBytes !== undefined) this.lowestBytes = usedBytes;
    this.measurements++;
  }

  /** Between measurements (the disk filled): only what the limits show, no walk. Joins a hold under way. */
  check(): Promise<void> {
    if (this.ended) return Promise.resolve();
    return this.holding ?? this.serve(async () => void (await this.hold()));
  }

  /**
   * Give back what its files hold past their end (fallocate --keep-size, which no limit stops):
   * truncating a file to its own size frees that and keeps every byte of it. Done as the tenant,
   * so nothing but its own files can be touched, whatever it swaps in meanwhile.
   */
  async freePreallocated(inodes: number[]): Promise<void> {
    const tenant = this.tenant;
    // its own folders named, not reached through a parent it may not list (a workspace in /tmp)
    const roots = [tenant.workspace, tenant.home!, tenant.tmp!, ...SHARED_WRITABLE_DIRS].filter((dir) => fs.existsSync(dir));
    const which = inodes.slice(0, MAX_TRUNCATED_PER_PASS).flatMap((inode, i) => [...(i ? ["-o"] : []), "-inum", String(inode)]);
    // a file it made read-only is made writable for the truncation and gets its mode back
    const truncate = 'for f; do m=$(stat -c %a "$f") && chmod u+w "$f" && truncate --no-create --size=+0 "$f"; chmod "$m" "$f"; done';
    const find = [...roots, "-xdev", "-type", "f", "-uid", String(tenant.identity!.uid), "(", ...which, ")", "-exec", "sh", "-c", truncate, "sh", "{}", "+"];
    const { command, args } = this.commandFor(tenant, "find", find);
    // its processes stopped meanwhile: one of its uid could lower the limits of this find until it died (./tenant-pause.ts)
    await whileStopped(tenant.identity!.uid, () => run(command, args, { timeout: TRUNCATE_TIMEOUT_MS }).catch(() => undefined)); // folders it cannot read: the rest is done
    this.log.warn("freed the space a tenant over its disk budget had preallocated past the end of its files", {
      tenant: tenant.name,
      files: Math.min(inodes.length, MAX_TRUNCATED_PER_PASS),
    });
  }

  /**
   * Back under budget: no hold starts any more, one under way ends first, then writes are allowed
   * again; a locked tenant's servers restart to get their limit back.
   */
  async end(usedBytes: number): Promise<void> {
    this.ended = true;
    await this.settled();
    const disk = this.tenant.identity!.disk;
    const wasLocked = disk.locked;
    disk.frozen = false;
    disk.locked = false;
    this.log.info("tenant back under its disk budget: writes allowed again", {
      tenant: this.tenant.name,
      usedMiB: mib(usedBytes),
      budgetMiB: mib(disk.budgetBytes),
      restartsServers: wasLocked,
    });
    // a hard limit, once lowered, only CAP_SYS_RESOURCE raises: a server started afresh has it whole
    if (wasLocked) for (const child of serversOf(this.tenant)) if (child.pid) void killTree(child.pid);
    await setLimit(this.tenant, await processesOf(this.tenant), fileSizeLimit(disk), this.commandFor, this.log);
  }

  private async settled(): Promise<void> {
    while (this.holding) await this.holding;
  }

  private serve(hold: () => Promise<void>): Promise<void> {
    return (this.holding = hold().finally(() => (this.holding = undefined)));
  }

  /**
   * Lower every process of the tenant. One that raised its soft limit again is killed, or every
   * command of a tenant whose use still grows (`grownTo`), and the tenant is locked: hard limits
   * drop to 0 too, so nothing it runs can raise them again. True when it killed any.
   */
  private async hold(grownTo?: number): Promise<boolean> {
    const disk = this.tenant.identity!.disk;
    const pids = await processesOf(this.tenant);
    const servers = new Set(serversOf(this.tenant).map((c) => c.pid));
    const limits = new Map(await Promise.all(pids.map(async (pid) => [pid, await fileSizeOf(pid)] as const)));
    const commands = pids.filter((pid) => !servers.has(pid));
    const above = commands.filter((pid) => (limits.get(pid)?.soft ?? 0) > 0);
    const raised = await this.raisers(above);
    const killed = new Set([...raised, ...(grownTo !== undefined ? commands : [])]);
    for (const pid of killed) signal(pid, "SIGKILL");
    if (killed.size) {
      disk.locked = true;
      const why = raised.length ? "they raised their file size limit while over budget" : "its disk use still grows while over budget";
      this.log.warn(`killed a tenant's processes and locked its file size limit: ${why}`, {
        tenant: this.tenant.name,
        count: killed.size,
        ...(grownTo !== undefined && { usedMiB: mib(grownTo) }),
      });
    }
    const hard = disk.locked ? 0 : disk.budgetBytes;
    const alive = pids.filter((pid) => !killed.has(pid));
    const loose = alive.filter((pid) => (limits.get(pid)?.soft ?? 0) > 0 || (limits.get(pid)?.hard ?? 0) > hard);
    await setLimit(this.tenant, loose, fileSizeLimit(disk), this.commandFor, this.log);
    this.atZero = new Set(alive);
    this.loweredAt ??= await ticksSinceBoot();
    return killed.size > 0;
  }

  /**
   * Of the tenant's commands above a soft limit of 0, those that raised it: seen at 0 before, or
   * started after everything was lowered. Only one started between the listing and the lowering
   * (its parent not lowered yet) has it from its parent; once two measurements have lowered
   * everything, none has.
   */
  private async raisers(above: number[]): Promise<number[]> {
    if (this.measurements >= 2) return above;
    const loweredAt = this.loweredAt;
    if (loweredAt === undefined) return [];
    const started = await Promise.all(above.map(async (pid) => (await readProcAsync(pid))?.startTicks ?? 0));
    return above.filter((pid, i) => this.atZero.has(pid) || started[i] > loweredAt);
  }
}
