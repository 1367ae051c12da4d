// Tenants: the unit of isolation, one per API key (or one keyless tenant). Each has its own
// workspace, home and temporary folder, its own instances of every server (started under its own
// uid when the hub can switch users), its own catalog and its own rate-limit budget.
import { createHash, timingSafeEqual } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ConfigError, type HubConfig, type TenantConfig } from "../config/config.js";
import { DISK_BUDGET_FILE_ENV } from "../../servers/lib/disk-budget.js";
import { MEMORY_RELIEF_FILE_ENV } from "../../servers/lib/memory-relief.js";
import { TENANT_PORTS_ENV } from "../../servers/lib/tenant-ports.js";
import { asTenant, type Isolation, type ProcessLimits } from "./isolation.js";
import { formatRange } from "../config/network.js";
import type { NetworkPlan, TenantNetwork } from "./network.js";
import { selectionOf, type SelectionSpec } from "../config/selection-spec.js";
import { madeWritable } from "./lock-file.js";
import { SHM_DIR } from "./shm-files.js";

// RLIMIT_NPROC counts threads too: a Chromium tab is about 20, a Python kernel about 5, so 36
// sessions each with a tab and a kernel reached 1,009 (bench/soak.ts) and 1,024 broke Chromium.
// Still a fork-bomb guard: a tenant cannot take the machine's task table (kernel.threads-max).
const DEFAULT_PROCESSES = 4096;
// The hub's helpers run as the tenant, whose processes may already hold every task its cap allows
// (a tenant forks until it cannot): each helper may start this many more, so the sweeps, the disk
// budget's limits and the removals still run. A node helper takes 7 threads, none takes more than 8,
// and a few may run at once. The tenant's own processes keep its cap, so they can never take these.
const HELPER_TASKS = 32;
// RLIMIT_DATA per process: half the machine, at most 8 GiB, so one process cannot take it all
const DEFAULT_MEMORY_BYTES = Math.min(8 * 1024 ** 3, Math.floor(os.totalmem() / 2));
const UID_BASE = 20_000;
const DEFAULT_STATE_DIR = "/var/lib/agentbox";
const UID_RANGE = 40_000;
// the share of the workspace's filesystem (and of /dev/shm) the tenants' default budgets add up to: the
// rest stays for the hub, its logs and the system, so tenants that all fill their budgets do not fill it
const DEFAULT_DISK_SHARE = 0.9;

/** Environment variables that hold secrets: never passed to a server or anything it runs. */
// an OTLP collector's headers usually carry its credentials: a tenant's code must not read them
const SECRET_ENV = new Set([
  "AGENTBOX_API_KEY",
  "AGENTBOX_TENANTS",
  "AGENTBOX_METRICS_KEY",
  "AGENTBOX_OAUTH_INTROSPECTION_CLIENT_SECRET",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
]);

const sha256 = (value: string) => createHash("sha256").update(value).digest();

export interface Tenant {
  readonly name: string;
  /** The digest of its API key, compared in constant time; none for a keyless tenant or a person. */
  readonly keyDigest?: Buffer;
  /** The person whose tenant this is, as their access tokens name them (signed in with OAuth, ./people.ts). */
  readonly person?: string;
  /** Its own uid/gid in "uid" isolation; undefined when it shares the hub's. */
  readonly identity?: ProcessLimits;
  readonly workspace: string;
  /** HOME and TMPDIR of its processes (undefined: the hub's own). */
  readonly home?: string;
  readonly tmp?: string;
  /** Where the hub publishes the tenant's disk use for its servers (servers/lib/disk-budget.ts). */
  readonly diskStatus?: string;
  /** Where the hub says it ended the tenant's processes because memory ran short (servers/lib/memory-relief.ts). */
  readonly memoryRelief?: string;
  /** Its sessions' default selection, over the global one (hub/config/selection-spec.ts). */
  readonly selection?: SelectionSpec;
  /** Its own TCP ports, when tenants are kept apart on the network (./network.ts). */
  readonly network?: TenantNetwork;
}

/**
 * A uid derived from the workspace and the tenant's name: stable across restarts and additions of
 * other tenants, and apart for two hubs on one machine (whose sweeps would otherwise meet).
 */
export function derivedUid(name: string, workspace: string): number {
  return (
    UID_BASE +
    (createHash("sha256")
      .update(`${path.resolve(workspace)}\0${name}`)
      .digest()
      .readUInt32BE(0) %
      UID_RANGE)
  );
}

/** Whether the hub has (or may come to have) several tenants: each then works in `<workspace>/<tenant>`. */
export const severalTenants = (config: Pick<HubConfig, "tenants" | "oauth">) => config.tenants.length > 1 || config.oauth !== undefined;

/** A tenant that proved who it is (an API key, or a person's token), as opposed to the keyless hub's one. */
export const identified = (tenant: Tenant) => tenant.keyDigest !== undefined || tenant.person !== undefined;

/** How many tenants the default disk budgets are shared among: the configured ones and as many people as may sign in. */
const budgetShares = (config: Pick<HubConfig, "tenants" | "oauth">) => Math.max(1, config.tenants.length + (config.oauth?.maxTenants ?? 0));

export function buildTenants(config: HubConfig, isolation: Isolation, network?: NetworkPlan): Tenant[] {
  const multi = severalTenants(config);
  if (multi && isolation.mode !== "uid") {
    const what = config.oauth ? "Sign-in with OAuth (a tenant per person) is configured" : `${config.tenants.length} tenants are configured`;
    throw new ConfigError(
      `${what}, but ${isolation.summary.replace(/^one tenant; /, "")}. ` +
        "Several tenants need the hub to run each one under its own uid: start it as root (in Docker: without --cap-drop ALL and --user), or configure " +
        "a single tenant (AGENTBOX_API_KEY).",
    );
  }
  const uids = new Map<number, string>();
  // budgets hold only under per-tenant uids (hub/tenants/disk-budget.ts)
  const defaults = defaultShares(config, isolation);
  return config.tenants.map((t) => {
    const identity = isolation.mode === "uid" ? limitsOf(t, config, defaults) : undefined;
    if (identity) {
      const clash = uids.get(identity.uid);
      if (clash) throw new ConfigError(`Tenants '${clash}' and '${t.name}' would share uid ${identity.uid}; give one of them its own "uid" in the config.`);
      if (identity.uid === process.getuid?.())
        throw new ConfigError(`Tenant '${t.name}' would run under the hub's own uid ${identity.uid}; give it another "uid".`);
      uids.set(identity.uid, t.name);
    }
    return tenantOf(config, { name: t.name, keyDigest: t.apiKey ? sha256(t.apiKey) : undefined, selection: selectionOf(t) }, identity, network);
  });
}

interface DefaultShares {
  diskBytes: number;
  sharedMemoryBytes: number;
  /** Of every other filesystem a tenant writes: the same fraction (hub/tenants/disk-budget.ts). */
  filesystemShare: number;
}

/** Each tenant's default share of the workspace's filesystem and of /dev/shm, and the fraction of any other filesystem it may hold. */
function defaultShares(config: HubConfig, isolation: Isolation): DefaultShares {
  const filesystemShare = DEFAULT_DISK_SHARE / budgetShares(config);
  const shareOf = (dir: string) => (isolation.mode === "uid" ? Math.floor(filesystemShare * filesystemBytes(dir)) : 0);
  return { diskBytes: shareOf(config.workspace), sharedMemoryBytes: shareOf(SHM_DIR), filesystemShare };
}

/** A person's tenant, made on their first sign-in: the configured limits, its own uid (./people.ts chooses it) and ports. */
export function buildPersonTenant(config: HubConfig, isolation: Isolation, name: string, person: string, uid: number, network?: NetworkPlan): Tenant {
  const identity = limitsOf({ name, uid } as TenantConfig, config, defaultShares(config, isolation));
  return tenantOf(config, { name, person }, identity, network);
}

/** A tenant's own folder: `<workspace>/<tenant>` on a hub with several tenants, else the workspace. */
export function tenantFolder(config: Pick<HubConfig, "workspace" | "tenants" | "oauth">, name: string): string {
  return severalTenants(config) ? path.join(config.workspace, name) : config.workspace;
}

/** A tenant's folder in the state folder (home, temporary folder, disk use). */
export function tenantStateFolder(config: HubConfig, name: string, uid: number): string {
  // named by uid too: two hubs on one machine (other workspaces) never share a tenant's home
  return path.join(stateDir(config), "tenants", `${name}-${uid}`);
}

function tenantOf(
  config: HubConfig,
  who: Pick<Tenant, "name" | "keyDigest" | "person" | "selection">,
  identity: ProcessLimits | undefined,
  network: NetworkPlan | undefined,
): Tenant {
  const workspace = tenantFolder(config, who.name);
  const state = identity ? tenantStateFolder(config, who.name, identity.uid) : undefined;
  return {
    ...who,
    identity,
    workspace,
    home: state && path.join(state, "home"),
    tmp: state && path.join(state, "tmp"),
    diskStatus: state && path.join(state, "disk.json"),
    memoryRelief: state && path.join(state, "memory.json"),
    network: network?.tenants.get(who.name),
  };
}

function limitsOf(t: TenantConfig, config: HubConfig, defaults: DefaultShares): ProcessLimits {
  const uid = t.uid ?? derivedUid(t.name, config.workspace);
  const limits = { ...config.limits, ...t.limits };
  return {
    uid,
    gid: uid,
    processes: limits.processes ?? DEFAULT_PROCESSES,
    memoryBytes: limits.memoryMiB ? limits.memoryMiB * 1024 * 1024 : DEFAULT_MEMORY_BYTES,
    disk: {
      budgetBytes: limits.diskMiB ? limits.diskMiB * 1024 * 1024 : defaults.diskBytes,
      filesystemShare: defaults.filesystemShare,
      frozen: false,
      locked: false,
    },
    sharedMemoryBytes: limits.sharedMemoryMiB ? limits.sharedMemoryMiB * 1024 * 1024 : defaults.sharedMemoryBytes,
  };
}

/** The size of the filesystem that holds `dir` (or will: its nearest existing ancestor). */
function filesystemBytes(dir: string): number {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    try {
      const fsInfo = fs.statfsSync(at);
      return fsInfo.blocks * fsInfo.bsize;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT" || at === path.dirname(at)) throw err;
    }
  }
}

/** Where tenants' homes live: the configured folder, else /var/lib/agentbox, else (read-only root) a temporary one. */
export function stateDir(config: HubConfig): string {
  if (config.stateDir) return path.resolve(config.stateDir);
  return madeWritable(DEFAULT_STATE_DIR, 0o711) ? DEFAULT_STATE_DIR : path.join(os.tmpdir(), "agentbox-state");
}

/** The tenant a presented API key belongs to (constant-time over every tenant). */
export function tenantForKey<T extends Tenant>(tenants: readonly T[], key: string): T | undefined {
  const digest = sha256(key);
  let found: T | undefined;
  for (const t of tenants) if (t.keyDigest && timingSafeEqual(t.keyDigest, digest)) found = t;
  return found;
}

// Folders a workspace must never be: handing them to a tenant uid would give it the system.
const SYSTEM_DIRS = new Set([
  ...["/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt"],
  ...["/proc", "/root", "/run", "/sbin", "/sys", "/tmp", "/usr", "/var"],
]);

/**
 * Create the tenant's folders and hand them to its uid: the workspace root stays the hub's
 * (traversable, not listable) when it holds several tenants' folders, each 0700 of its tenant.
 */
export function prepareTenant(tenant: Tenant, config: HubConfig, log: (msg: string, fields?: Record<string, unknown>) => void): void {
  const multi = tenant.workspace !== config.workspace;
  if (SYSTEM_DIRS.has(path.resolve(config.workspace)))
    throw new ConfigError(`The workspace ${config.workspace} is a system folder; choose a folder of its own (AGENTBOX_WORKSPACE).`);
  fs.mkdirSync(tenant.workspace, { recursive: true });
  const id = tenant.identity;
  if (!id) return;
  if (multi) fs.chmodSync(config.workspace, 0o711);
  handOver(tenant.workspace, id, log);
  for (const dir of [tenant.home!, tenant.tmp!]) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    handOver(dir, id, log);
  }
  for (let dir = path.dirname(tenant.home!); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    // the tenant must reach its home through folders it cannot list
    const mode = fs.statSync(dir).mode & 0o777;
    if ((mode & 0o001) === 0) fs.chmodSync(dir, mode | 0o001);
    if (dir === stateDir(config)) break;
  }
  const unreachable = firstUntraversable(tenant.workspace);
  if (unreachable) {
    throw new ConfigError(
      `Tenant '${tenant.name}' (uid ${id.uid}) cannot reach its workspace ${tenant.workspace}: ${unreachable} is not traversable by other users (chmod ` +
        `o+x it, or choose another AGENTBOX_WORKSPACE).`,
    );
  }
}

/**
 * Give a folder to the tenant. Only what the hub itself owns (root, or its own uid) changes hands:
 * a folder mounted from the host and owned by someone else is left alone, with a warning.
 */
function handOver(dir: string, id: ProcessLimits, log: (msg: string, fields?: Record<string, unknown>) => void): void {
  const hubUids = new Set([0, process.getuid?.() ?? 0]);
  const owner = fs.statSync(dir).uid;
  if (owner === id.uid) {
    fs.chmodSync(dir, 0o700);
    return;
  }
  if (!hubUids.has(owner)) {
    log("workspace owned by another user; the tenant may not be able to write it", { dir, owner, tenantUid: id.uid });
    return;
  }
  chownTree(dir, id.uid, id.gid, hubUids);
  fs.chmodSync(dir, 0o700);
}

function chownTree(dir: string, uid: number, gid: number, from: Set<number>): void {
  const st = fs.lstatSync(dir);
  if (from.has(st.uid)) fs.lchownSync(dir, uid, gid);
  if (!st.isDirectory()) return;
  for (const entry of fs.readdirSync(dir)) chownTree(path.join(dir, entry), uid, gid, from);
}

/** The first ancestor that a user who is neither its owner nor in its group cannot pass. */
export function firstUntraversable(target: string): string | undefined {
  for (let dir = path.dirname(path.resolve(target)); ; dir = path.dirname(dir)) {
    if ((fs.statSync(dir).mode & 0o001) === 0) return dir;
    if (dir === path.dirname(dir)) return undefined;
  }
}

/**
 * What a tenant's server starts with: the hub's environment without its secrets (nor any variable
 * holding one of the tenants' keys), plus the tenant's own folders.
 */
export function tenantEnv(tenant: Tenant, secrets: string[], base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value === undefined || SECRET_ENV.has(key) || secrets.some((s) => value === s || (s.length >= 8 && value.includes(s)))) continue;
    env[key] = value;
  }
  env.AGENTBOX_WORKSPACE = tenant.workspace;
  if (tenant.identity) {
    // settings pointing into the hub's own home (npm's cache, a config) are out of the tenant's reach
    const hubHome = base.HOME;
    for (const [key, value] of Object.entries(env)) {
      if (hubHome && hubHome !== "/" && key !== "PATH" && (value === hubHome || value.startsWith(`${hubHome}/`))) delete env[key];
    }
    Object.assign(env, {
      HOME: tenant.home!,
      TMPDIR: tenant.tmp!,
      USER: tenant.name,
      LOGNAME: tenant.name,
      [DISK_BUDGET_FILE_ENV]: tenant.diskStatus!,
      [MEMORY_RELIEF_FILE_ENV]: tenant.memoryRelief!,
    });
  }
  if (tenant.network) {
    // PORT: what many dev servers listen on when told nothing; the hub's own PORT would only be refused
    Object.assign(env, { [TENANT_PORTS_ENV]: formatRange(tenant.network.ports), PORT: String(tenant.network.ports.low) });
  }
  return env;
}

/**
 * How a program runs as this tenant: a server, confined to the tenant's ports (./network.ts) and
 * the hub's, or one of the hub's own short helpers, left outside every Landlock domain so it can
 * read the processes of all the tenant's servers (a domain's processes cannot ptrace it), and given
 * room above the tenant's process cap (HELPER_TASKS).
 */
export function tenantCommand(
  tenant: Tenant,
  isolation: Isolation,
  command: string,
  args: string[],
  server?: { hubPort: number | undefined },
): { command: string; args: string[] } {
  if (!tenant.identity) return { command, args };
  if (!server) return asTenant(isolation, { ...tenant.identity, processes: tenant.identity.processes + HELPER_TASKS }, command, args);
  const confinement = tenant.network ? tenant.network.confine(server.hubPort) : [];
  return asTenant(isolation, tenant.identity, command, args, confinement);
}
