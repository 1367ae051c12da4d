// How far the hub can keep agents apart. With the capabilities to switch users (root, or
// CAP_SETUID/CAP_SETGID/CAP_CHOWN/CAP_KILL: Docker's defaults) every tenant's servers, and so
// everything an agent runs, live under a uid of the tenant's own, with no capabilities, no way to
// regain any (no_new_privs) and capped processes and memory. Without them the hub serves one
// tenant whose processes share the hub's uid, and says so.
import fs from "node:fs";

export type IsolationMode = "uid" | "shared-uid";

export interface Isolation {
  mode: IsolationMode;
  /** One line for the startup log, GET / and hub_status. */
  summary: string;
  /** setpriv can also empty the capability bounding set (needs CAP_SETPCAP). */
  canDropBoundingSet: boolean;
}

// capability numbers from linux/capability.h
const CAP = { CHOWN: 0, FOWNER: 3, KILL: 5, SETGID: 6, SETUID: 7, SETPCAP: 8 } as const;

/** The effective capability set of this process, from /proc (Linux). */
export function effectiveCapabilities(status = readStatus()): bigint {
  const hex = /^CapEff:\s*([0-9a-f]+)/m.exec(status)?.[1];
  return hex ? BigInt(`0x${hex}`) : 0n;
}

function readStatus(): string {
  try {
    return fs.readFileSync("/proc/self/status", "utf8");
  } catch {
    return "";
  }
}

const has = (caps: bigint, cap: number) => ((caps >> BigInt(cap)) & 1n) === 1n;

export function detectIsolation(caps = effectiveCapabilities(), hasSetpriv = commandExists("setpriv") && commandExists("prlimit")): Isolation {
  const needed = [CAP.SETUID, CAP.SETGID, CAP.CHOWN, CAP.FOWNER, CAP.KILL];
  if (needed.every((c) => has(caps, c)) && hasSetpriv) {
    return {
      mode: "uid",
      summary:
        "each tenant's servers and everything its agents run live under the tenant's own uid, without capabilities (no_new_privs), with capped " +
        "processes and memory",
      canDropBoundingSet: has(caps, CAP.SETPCAP),
    };
  }
  const why = hasSetpriv
    ? "the hub cannot switch users (it needs root or CAP_SETUID, CAP_SETGID, CAP_CHOWN, CAP_FOWNER and CAP_KILL)"
    : "setpriv/prlimit (util-linux) are not installed";
  return {
    mode: "shared-uid",
    summary: `one tenant; agents' processes run under the hub's own uid because ${why}: an agent can reach the hub's processes, so run one container per agent`,
    canDropBoundingSet: false,
  };
}

export function commandExists(name: string): boolean {
  return (process.env.PATH ?? "/usr/bin:/bin").split(":").some((dir) => {
    try {
      fs.accessSync(`${dir}/${name}`, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

export interface ProcessLimits {
  uid: number;
  gid: number;
  /** RLIMIT_NPROC: tasks (processes and threads) the tenant's uid may have at once. */
  processes: number;
  /** RLIMIT_DATA per process, in bytes: heap and private writable memory. */
  memoryBytes: number;
  /** The tenant's disk budget; its processes start with it as RLIMIT_FSIZE (hub/tenants/disk-budget.ts). */
  disk: DiskLimit;
  /** What its files in /dev/shm may hold while it has a live session (hub/tenants/shm-files.ts). */
  sharedMemoryBytes: number;
}

export interface DiskLimit {
  readonly budgetBytes: number;
  /**
   * What it may hold of any other filesystem it writes (/tmp, /var/tmp, its home's, when not the workspace's), as a
   * fraction of that filesystem's size; within the budget too. Undefined: only the budget.
   */
  readonly filesystemShare?: number;
  /** Over budget: processes start (and running ones are set) with a soft RLIMIT_FSIZE of 0. */
  frozen: boolean;
  /** Over budget and evading it: the hard limit is 0 too, so no process can raise it back. */
  locked: boolean;
}

/** RLIMIT_FSIZE as prlimit takes it: no file may grow past the budget; none at all while frozen. */
export function fileSizeLimit(disk: DiskLimit): string {
  const hard = disk.locked ? 0 : disk.budgetBytes;
  return `${disk.frozen ? 0 : hard}:${hard}`;
}

/**
 * The command line that starts `command` as the tenant: setpriv drops to its uid and gid with no
 * supplementary groups, no capabilities (inheritable, ambient, bounding) and no_new_privs, so no
 * setuid binary or file capability can lift it again; prlimit then caps what it may use (as the
 * tenant: it can lower its limits but, without CAP_SYS_RESOURCE, never raise a hard one again).
 * `confinement` (./network.ts) comes first, still as the hub's uid: the tenant's uid never runs
 * outside it, so none of its processes can reach (or ptrace) one that does.
 */
export function asTenant(
  isolation: Isolation,
  limits: ProcessLimits,
  command: string,
  args: string[],
  confinement: readonly string[] = [],
): { command: string; args: string[] } {
  const setpriv = [
    `--reuid=${limits.uid}`,
    `--regid=${limits.gid}`,
    "--clear-groups",
    "--no-new-privs",
    "--inh-caps=-all",
    ...(isolation.canDropBoundingSet ? ["--bounding-set=-all"] : []),
  ];
  const prlimit = [
    `--nproc=${limits.processes}:${limits.processes}`,
    `--data=${limits.memoryBytes}:${limits.memoryBytes}`,
    `--fsize=${fileSizeLimit(limits.disk)}`,
    "--core=0:0",
  ];
  const line = [...confinement, "setpriv", ...setpriv, "--", "prlimit", ...prlimit, "--", command, ...args];
  return { command: line[0], args: line.slice(1) };
}
