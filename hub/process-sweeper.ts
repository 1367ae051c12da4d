// Processes that escaped their server. A command can daemonize (setsid, double fork, `env -i`) and
// so leave the tree its server kills when a session ends. Under per-tenant uids every process of a
// tenant's uid is either below one of the tenant's servers or an escapee; escapees live only while
// the session named in their AGENTBOX_SESSION (set by the servers on everything they start) lives.
import fs from "node:fs";
import { descendantsOf, listProcesses } from "../servers/lib/proctree.js";
import type { Logger } from "../servers/lib/log.js";
import type { ServedTenant } from "./hub.js";
import type { ClientSession, SessionRegistry } from "./sessions.js";

const SESSION_MARKER = "AGENTBOX_SESSION";
const SWEEP_EVERY_MS = 5_000;
// after a session ends its servers kill what they know of; the sweep then takes what is left
const AFTER_SESSION_END_MS = [1_000, 3_000];

/** The real uid of a process (from status: /proc/<pid> itself is root's when it is not dumpable). */
function realUid(pid: number): number | undefined {
  try {
    const line = /^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

function sessionMarker(pid: number): string | undefined {
  try {
    const entry = fs
      .readFileSync(`/proc/${pid}/environ`, "latin1")
      .split("\0")
      .find((e) => e.startsWith(`${SESSION_MARKER}=`));
    return entry?.slice(SESSION_MARKER.length + 1);
  } catch {
    return undefined;
  }
}

export class ProcessSweeper {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly tenants: ServedTenant[],
    private readonly sessions: SessionRegistry,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (!this.tenants.some((t) => t.identity)) return;
    this.timer = setInterval(() => this.sweepAll(), SWEEP_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  sessionEnded(session: ClientSession): void {
    if (!session.tenant.identity) return;
    for (const delay of AFTER_SESSION_END_MS) setTimeout(() => this.sweep(session.tenant), delay).unref();
  }

  private sweepAll(): void {
    for (const tenant of this.tenants) this.sweep(tenant);
  }

  /** Kill the tenant's processes that are below none of its servers and whose session has ended. */
  sweep(tenant: ServedTenant): number {
    const uid = tenant.identity?.uid;
    if (uid === undefined) return 0;
    const procs = listProcesses();
    const kept = new Set<number>();
    for (const child of tenant.children) {
      if (!child.pid) continue;
      kept.add(child.pid);
      for (const p of descendantsOf(child.pid, procs)) kept.add(p.pid);
    }
    const live = new Set(this.sessions.all().filter((s) => s.tenant === tenant).map((s) => s.id));
    let killed = 0;
    for (const p of procs) {
      if (kept.has(p.pid) || p.state === "Z" || realUid(p.pid) !== uid) continue;
      const marker = sessionMarker(p.pid);
      if (marker !== undefined && live.has(marker)) continue;
      try {
        process.kill(p.pid, "SIGKILL");
        killed++;
      } catch {
        // gone already
      }
    }
    if (killed) this.log.info("killed processes that outlived their session", { tenant: tenant.name, count: killed });
    return killed;
  }
}
