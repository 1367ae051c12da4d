// Processes that escaped their server. A command can daemonize (setsid, double fork, `env -i`) and
// so leave the tree its server kills when a session ends. Under per-tenant uids every process of a
// tenant's uid is either below one of the tenant's servers or an escapee; escapees live only while
// the session named in their AGENTBOX_SESSION (set by the servers on everything they start) lives.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { descendantsOf, listProcesses, realUid, type ProcInfo } from "../servers/lib/proctree.js";
import type { Logger } from "../servers/lib/log.js";
import type { ServedTenant } from "./hub.js";
import type { ClientSession, SessionRegistry } from "./sessions.js";

const SESSION_MARKER = "AGENTBOX_SESSION";
const SWEEP_EVERY_MS = 5_000;
// after a session ends its servers kill what they know of; the sweep then takes what is left
const AFTER_SESSION_END_MS = [1_000, 3_000];

const markerIn = (environ: string) => {
  const entry = environ.split("\0").find((e) => e.startsWith(`${SESSION_MARKER}=`));
  return entry?.slice(SESSION_MARKER.length + 1);
};

/**
 * The session markers of some of a tenant's processes. Root reads them directly where it has
 * CAP_SYS_PTRACE; in a container without it (Docker's default) the tenant's own uid reads them.
 */
function sessionMarkers(pids: number[], asTenant: TenantCommand): Map<number, string | undefined> {
  const markers = new Map<number, string | undefined>();
  const unreadable: number[] = [];
  for (const pid of pids) {
    try {
      markers.set(pid, markerIn(fs.readFileSync(`/proc/${pid}/environ`, "latin1")));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EACCES") unreadable.push(pid);
    }
  }
  if (unreadable.length === 0) return markers;
  const script = 'for p; do printf "%s=" "$p"; tr "\\0" "\\n" < /proc/$p/environ 2>/dev/null | grep -m1 "^' + SESSION_MARKER + '=" | cut -d= -f2; echo; done';
  const { command, args } = asTenant("sh", ["-c", script, "sh", ...unreadable.map(String)]);
  const out = spawnSync(command, args, { encoding: "utf8", timeout: 5000 });
  for (const line of (out.stdout ?? "").split("\n")) {
    const [pid, marker] = line.split("=");
    if (pid && Number(pid)) markers.set(Number(pid), marker || undefined);
  }
  return markers;
}

/** The command line that runs a program as a tenant (tenants.ts tenantCommand, bound to one tenant). */
type TenantCommand = (command: string, args: string[]) => { command: string; args: string[] };

export class ProcessSweeper {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly tenants: ServedTenant[],
    private readonly sessions: SessionRegistry,
    private readonly log: Logger,
    private readonly commandFor: (tenant: ServedTenant) => TenantCommand,
  ) {}

  start(): void {
    if (!this.tenants.some((t) => t.identity)) return;
    this.timer = setInterval(() => this.sweepAll(), SWEEP_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Tenants with sweeps after a session end pending: sessions ending meanwhile share them. */
  private readonly afterEndPending = new Set<ServedTenant>();

  sessionEnded(session: ClientSession): void {
    const tenant = session.tenant;
    // one pending pair of sweeps per tenant, however many sessions end (1,200 closures were 2,400 sweeps of /proc)
    if (!tenant.identity || this.afterEndPending.has(tenant)) return;
    this.afterEndPending.add(tenant);
    const [first, second] = AFTER_SESSION_END_MS;
    setTimeout(() => {
      this.sweep([tenant]);
      setTimeout(() => {
        this.afterEndPending.delete(tenant);
        this.sweep([tenant]);
      }, second - first).unref();
    }, first).unref();
  }

  private sweepAll(): void {
    this.sweep(this.tenants);
  }

  /** One read of the process table, then each tenant's sweep over its own processes. */
  private sweep(tenants: ServedTenant[]): void {
    const procs = listProcesses();
    const byUid = new Map<number, ProcInfo[]>();
    for (const p of procs) {
      if (p.state === "Z") continue;
      const uid = realUid(p.pid);
      if (uid === undefined) continue;
      const list = byUid.get(uid);
      if (list) list.push(p);
      else byUid.set(uid, [p]);
    }
    for (const tenant of tenants) {
      const own = tenant.identity && byUid.get(tenant.identity.uid);
      if (own) this.sweepTenant(tenant, procs, own);
    }
  }

  /** Kill the tenant's processes that are below none of its servers and whose session has ended. */
  private sweepTenant(tenant: ServedTenant, procs: ProcInfo[], own: ProcInfo[]): void {
    const kept = new Set<number>();
    for (const child of tenant.children) {
      if (!child.pid) continue;
      kept.add(child.pid);
      for (const p of descendantsOf(child.pid, procs)) kept.add(p.pid);
    }
    const live = new Set(this.sessions.all().filter((s) => s.tenant === tenant).map((s) => s.id));
    const escaped = own.filter((p) => !kept.has(p.pid)).map((p) => p.pid);
    if (escaped.length === 0) return;
    const markers = sessionMarkers(escaped, this.commandFor(tenant));
    let killed = 0;
    for (const pid of escaped) {
      const marker = markers.get(pid);
      if (marker !== undefined && live.has(marker)) continue;
      try {
        process.kill(pid, "SIGKILL");
        killed++;
      } catch {
        // gone already
      }
    }
    if (killed) this.log.info("killed processes that outlived their session", { tenant: tenant.name, count: killed });
  }
}
