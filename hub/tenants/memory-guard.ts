// Memory is capped per process here (RLIMIT_DATA), not per tenant: a default container delegates no
// cgroup to the hub. So one tenant's processes can together take the memory that every tenant and
// the hub share, and the kernel's OOM killer then ends the largest process anywhere: the hub, or
// another tenant's browser. The hub looks at what memory is left ten times a second (what the
// container's cgroup limit leaves where it has one, else the machine's MemAvailable) and, when less
// than its reserve is, ends the largest processes of the tenant holding the most, never one of its
// servers, until what they held covers what is missing: before the kernel has to choose. (What a
// tenant allocates faster than that, the kernel still meets first.)
import fs from "node:fs";
import { errorMessage, type Logger } from "../../servers/lib/log.js";
import { listOwners, readProc, readProcAsync } from "../../servers/lib/proc-table.js";
import { signal } from "../../servers/lib/proctree.js";
import type { Clock, Timer } from "../protocol/clock.js";
import { runningServers, type ServedTenant } from "./served-tenant.js";
import { publishForTenant } from "./tenant-status.js";
import type { MemoryRelief } from "../../servers/lib/memory-relief.js";

const LOOK_EVERY_MS = 100;
// after ending a tenant's processes, only that tenant's are ended for this long: its commands take a
// moment to end (a terminal ends what a command left running) and the memory to show as free, and
// meanwhile another tenant would be ended for what the first still held
const SETTLE_MS = 1_000;
const MIB = 1024 * 1024;

export interface MemoryLeft {
  /** What can still be allocated before the kernel must reclaim by killing. */
  availableBytes: number;
  /** What there is in all: the container's limit, else the machine's memory. */
  totalBytes: number;
}

/** The reserve when none is configured: a tenth of the memory (as earlyoom's), at least 256 MiB, at most 2 GiB. */
export const defaultReserve = (totalBytes: number) => Math.min(2048 * MIB, Math.max(256 * MIB, Math.floor(totalBytes / 10)));

// cgroup v1 says "no limit" with a number near 2^63
const NO_LIMIT = 2 ** 60;

const readSmall = (file: string) => {
  try {
    return fs.readFileSync(file, "latin1");
  } catch {
    return undefined;
  }
};

/**
 * How to read what memory is left: the machine's MemAvailable and free swap, or less where the cgroup the hub runs
 * in has a limit (a container's `--memory`; cgroup v2, else v1's memory controller): the limit less
 * what is charged to it, its inactive page cache counted as free (the kernel takes that back before
 * it kills). Which files hold it is found once; each look reads a few small ones in place (a few
 * tens of µs: through the thread pool, the same look took 0.7 ms). It gives undefined when
 * neither can be read.
 */
export function memorySource(meminfo = "/proc/meminfo", cgroup = "/sys/fs/cgroup"): () => MemoryLeft | undefined {
  const v2 = { limit: `${cgroup}/memory.max`, charged: `${cgroup}/memory.current`, stat: `${cgroup}/memory.stat` };
  const v1 = { limit: `${cgroup}/memory/memory.limit_in_bytes`, charged: `${cgroup}/memory/memory.usage_in_bytes`, stat: `${cgroup}/memory/memory.stat` };
  const limited = [v2, v1].find((files) => Number(readSmall(files.limit)?.trim()) < NO_LIMIT && readSmall(files.charged) !== undefined);
  return () => {
    const info = readSmall(meminfo);
    const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(info ?? "")?.[1]) * 1024;
    // free swap counts: the kernel ends a process only once that is gone too
    let left: MemoryLeft | undefined =
      info && Number.isFinite(kib("MemAvailable")) ? { availableBytes: kib("MemAvailable") + (kib("SwapFree") || 0), totalBytes: kib("MemTotal") } : undefined;
    if (!limited) return left;
    const limit = Number(readSmall(limited.limit)?.trim());
    const charged = Number(readSmall(limited.charged)?.trim());
    if (!Number.isFinite(limit) || !Number.isFinite(charged)) return left;
    const inactiveFile = Number(/^inactive_file (\d+)$/m.exec(readSmall(limited.stat) ?? "")?.[1] ?? 0);
    const available = Math.max(0, limit - charged + inactiveFile);
    if (!left || available < left.availableBytes) left = { availableBytes: available, totalBytes: Math.min(limit, left?.totalBytes ?? limit) };
    return left;
  };
}

/** What memory is left now (memorySource, read once). */
export const memoryLeft = (meminfo?: string, cgroup?: string) => memorySource(meminfo, cgroup)();

/** A process of a tenant, with what it holds. */
export interface HeldMemory {
  pid: number;
  uid: number;
  rssBytes: number;
}

/**
 * Which processes to end for `neededBytes`: the tenants by what they hold in all (their servers
 * included), the largest first; of each, its largest processes that are not one of its servers
 * (`servers`, by uid), until what they held covers the need. A tenant with nothing but its servers
 * is passed over for the next.
 */
export function victims(held: readonly HeldMemory[], servers: ReadonlyMap<number, ReadonlySet<number>>, neededBytes: number): HeldMemory[] {
  const byTenant = new Map<number, HeldMemory[]>();
  for (const p of held) byTenant.set(p.uid, [...(byTenant.get(p.uid) ?? []), p]);
  const total = (procs: HeldMemory[]) => procs.reduce((sum, p) => sum + p.rssBytes, 0);
  const chosen: HeldMemory[] = [];
  let freed = 0;
  for (const [uid, procs] of [...byTenant].sort(([, a], [, b]) => total(b) - total(a))) {
    const own = servers.get(uid) ?? new Set<number>();
    for (const p of procs.filter((q) => !own.has(q.pid) && q.rssBytes > 0).sort((a, b) => b.rssBytes - a.rssBytes)) {
      if (freed >= neededBytes) return chosen;
      chosen.push(p);
      freed += p.rssBytes;
    }
    if (chosen.length > 0) return chosen; // one tenant at a time: the next look sees what its ending freed
  }
  return chosen;
}

export class MemoryGuard {
  private timer?: Timer;
  private looking = false;
  /** What the last relief ended, until it has exited: memory comes back only then. */
  private ending: number[] = [];
  /** Until then only the tenant relieved last may be relieved again: what its ending freed takes a moment to show. */
  private settledAt = 0;
  private relievedUid?: number;

  constructor(
    private readonly tenants: ServedTenant[],
    private readonly log: Logger,
    private readonly clock: Clock,
    /** Undefined: the default for the memory found at start (defaultReserve). */
    private reserveBytes: number | undefined,
    private readonly left: () => MemoryLeft | undefined = memorySource(),
  ) {}

  start(): void {
    const now = this.left();
    if (!now) return this.log.warn("what memory is left cannot be read (/proc/meminfo): no tenant's processes are ended when it runs short");
    this.reserveBytes ??= defaultReserve(now.totalBytes);
    this.timer = this.clock.every(LOOK_EVERY_MS, () => void this.look());
  }

  stop(): void {
    this.timer?.cancel();
  }

  /** One look: when less than the reserve is left, end what covers the rest. */
  async look(): Promise<void> {
    if (this.looking) return;
    this.looking = true;
    try {
      this.ending = this.ending.filter((pid) => (readProc(pid)?.state ?? "Z") !== "Z");
      const now = this.left();
      if (now && now.availableBytes < this.reserveBytes! && this.ending.length === 0)
        await this.relieve(now, this.clock.now() < this.settledAt ? this.relievedUid : undefined);
    } catch (err) {
      this.log.warn("ending processes while memory is short failed", { error: errorMessage(err) });
    } finally {
      this.looking = false;
    }
  }

  /** `onlyUid`: while the last relief settles, the tenant it relieved may still grow; no other is chosen meanwhile. */
  private async relieve(now: MemoryLeft, onlyUid?: number): Promise<void> {
    const byUid = new Map(
      this.tenants.flatMap((t) => (t.identity && (onlyUid === undefined || t.identity.uid === onlyUid) ? [[t.identity.uid, t] as const] : [])),
    );
    const procs = (await listOwners()).filter((p) => byUid.has(p.uid) && p.state !== "Z");
    const held: HeldMemory[] = [];
    for (const p of procs) held.push({ pid: p.pid, uid: p.uid, rssBytes: (await readProcAsync(p.pid))?.rssBytes ?? 0 });
    const servers = new Map([...byUid].map(([uid, t]) => [uid, new Set(runningServers(t).flatMap((c) => (c.pid ? [c.pid] : [])))]));
    const chosen = victims(held, servers, this.reserveBytes! - now.availableBytes);
    if (chosen.length === 0) return;
    const ended = chosen.filter((p) => signal(p.pid, "SIGKILL"));
    this.ending = ended.map((p) => p.pid);
    this.settledAt = this.clock.now() + SETTLE_MS;
    this.relievedUid = chosen[0].uid;
    const tenant = byUid.get(chosen[0].uid)!;
    const tenantBytes = held.filter((p) => p.uid === chosen[0].uid).reduce((sum, p) => sum + p.rssBytes, 0);
    const relief: MemoryRelief = {
      at: Date.now(),
      pids: ended.map((p) => p.pid),
      endedMiB: Math.round(ended.reduce((sum, p) => sum + p.rssBytes, 0) / MIB),
      tenantMiB: Math.round(tenantBytes / MIB),
    };
    this.log.warn("memory was short: ended the largest processes of the tenant holding the most", {
      tenant: tenant.name,
      ...relief,
      availableMiB: Math.round(now.availableBytes / MIB),
      reserveMiB: Math.round(this.reserveBytes! / MIB),
    });
    // so that the tenant's commands that died of it say why (servers/lib/memory-relief.ts)
    try {
      if (tenant.memoryRelief) publishForTenant(tenant.memoryRelief, relief);
    } catch (err) {
      this.log.warn("telling a tenant's servers of a memory relief failed", { tenant: tenant.name, error: errorMessage(err) });
    }
  }
}
