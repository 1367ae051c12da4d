// IPC objects outlive the processes that make them: System V shared memory segments, semaphore
// sets and message queues, and POSIX message queues. A command can fill a gigabyte of shared
// memory, detach and exit, and the memory stays taken, past its session and past the hub, counted
// against no limit of its tenant's processes. So they go the way of a tenant's escaped processes
// (./sweeper.ts): removed once the tenant has no live session, before the hub listens and when it
// stops. An object is a tenant's when its uid made it or owns it (its owner can give a System V
// object to another uid; its creator stays). The kernel's count of each kind is shared by the
// whole machine (4,096 shared memory segments, 256 POSIX message queues by default): a tenant
// holding more than its share of one kind has the newest beyond it removed, so one tenant cannot
// leave the others none.
import { execFile } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { nextTurn } from "../../servers/lib/next-turn.js";
import type { TenantCommand } from "./process-claims.js";

const execFileAsync = promisify(execFile);
const AS_TENANT_TIMEOUT_MS = 10_000;

const KINDS = [
  { kind: "shm", table: "/proc/sysvipc/shm", idColumn: "shmid", flag: "-m" },
  { kind: "sem", table: "/proc/sysvipc/sem", idColumn: "semid", flag: "-s" },
  { kind: "msg", table: "/proc/sysvipc/msg", idColumn: "msqid", flag: "-q" },
] as const;
// ids per ipcrm run: its arguments stay far below the system's limit however many objects a tenant made
const IDS_PER_RUN = 500;
// rows of a table read between two turns of the event loop (about 2 ms)
const ROWS_PER_SLICE = 2_000;
/**
 * Where POSIX message queues show as files (named by mq_open, owned by their creator's uid). Docker mounts it in
 * every container; elsewhere it takes `mount -t mqueue none /dev/mqueue`, and unmounted the queues cannot be listed.
 */
export const MQUEUE_DIR = "/dev/mqueue";
const MQUEUE_MAGIC = 0x19800202;
// paths per rm run, as IDS_PER_RUN (a queue's name is at most 255 bytes)
const PATHS_PER_RUN = 100;

type SystemVKind = (typeof KINDS)[number]["kind"];
export type IpcKind = SystemVKind | "mqueue";

/**
 * Objects of each kind a tenant may hold at once: a sixteenth of the kernel's default count of shared memory segments
 * (4,096) and of POSIX message queues (256; the machine's count, whoever made them).
 */
export const IPC_SHARES: Readonly<Record<IpcKind, number>> = { shm: 256, sem: 256, msg: 256, mqueue: 16 };

interface Owned {
  uid: number;
  cuid: number;
  /** A shared memory segment's size in bytes (0 for the others). */
  bytes: number;
  /** When it was made or last changed (ctime, seconds since the epoch): the newest go first when a tenant holds too many. */
  changed: number;
}

/** A System V object, by its kind and id; or a POSIX message queue, by its file in MQUEUE_DIR. */
export type IpcObject = (Owned & { kind: SystemVKind; id: number }) | (Owned & { kind: "mqueue"; path: string });

/** Reads one row of a /proc/sysvipc table whose header is `header`; columns are found by name, which differ by kind and kernel. */
function rowReader(kind: SystemVKind, header: string): ((row: string) => IpcObject | undefined) | undefined {
  const columns = header.trim().split(/\s+/);
  const at = (name: string) => columns.indexOf(name);
  const [id, uid, cuid, size, ctime] = [at(KINDS.find((k) => k.kind === kind)!.idColumn), at("uid"), at("cuid"), at("size"), at("ctime")];
  if (id < 0 || uid < 0 || cuid < 0) return undefined;
  return (row) => {
    const cells = row.trim().split(/\s+/);
    const numbers = [cells[id], cells[uid], cells[cuid]].map(Number);
    if (cells.length < columns.length || !numbers.every(Number.isSafeInteger)) return undefined;
    const [bytes, changed] = [size, ctime].map((column) => (column >= 0 ? Number(cells[column]) || 0 : 0));
    return { kind, id: numbers[0], uid: numbers[1], cuid: numbers[2], bytes, changed };
  };
}

/** Where the objects are read from: the kernel's, unless a test says otherwise. */
export interface IpcSources {
  readTable?: (file: string) => Promise<string>;
  queueDir?: string;
}

/**
 * The IPC objects that a uid of `uids` made or owns (rows of a table that are not whole are skipped). A tenant can fill
 * a table (32,000 semaphore sets: 38 ms to read in one go), so rows are read a slice at a time, other work running
 * between slices.
 */
export async function ipcObjectsOf(uids: ReadonlySet<number>, sources: IpcSources = {}): Promise<IpcObject[]> {
  const { readTable = (file: string) => fsp.readFile(file, "utf8"), queueDir = MQUEUE_DIR } = sources;
  const found: IpcObject[] = [];
  for (const { kind, table } of KINDS) {
    const text = await readTable(table).catch(() => ""); // no System V IPC in this kernel
    const [header, ...rows] = text.split("\n");
    const read = rowReader(kind, header);
    for (let i = 0; read && i < rows.length; i += ROWS_PER_SLICE) {
      if (i > 0) await nextTurn();
      for (const row of rows.slice(i, i + ROWS_PER_SLICE)) {
        const o = read(row);
        if (o && (uids.has(o.uid) || uids.has(o.cuid))) found.push(o);
      }
    }
  }
  return found.concat(await queuesOf(uids, queueDir));
}

/** The POSIX message queues in `dir` a uid of `uids` owns: the kernel bounds them at 256 (queues_max) for the whole machine. */
async function queuesOf(uids: ReadonlySet<number>, dir: string): Promise<IpcObject[]> {
  const names = await fsp.readdir(dir).catch(() => [] as string[]); // not mounted: the hub warned at start (queuesVisible)
  const found: IpcObject[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    const stat = await fsp.lstat(file).catch(() => undefined); // removed meanwhile
    if (stat?.isFile() && uids.has(stat.uid)) found.push({ kind: "mqueue", path: file, uid: stat.uid, cuid: stat.uid, bytes: 0, changed: stat.ctimeMs / 1000 });
  }
  return found;
}

/** Whether POSIX message queues can be listed: `dir` is an mqueue file system. */
export function queuesVisible(dir = MQUEUE_DIR): boolean {
  try {
    return fs.statfsSync(dir).type === MQUEUE_MAGIC;
  } catch {
    return false;
  }
}

/** Of one tenant's objects, those beyond its share of their kind: the newest, so what its programs set up first stays. */
export function overShare(own: readonly IpcObject[], shares: Readonly<Record<IpcKind, number>> = IPC_SHARES): IpcObject[] {
  const older = (a: IpcObject, b: IpcObject) => a.changed - b.changed || (a.kind === "mqueue" || b.kind === "mqueue" ? 0 : a.id - b.id);
  return (Object.keys(shares) as IpcKind[]).flatMap((kind) =>
    own
      .filter((o) => o.kind === kind)
      .sort(older)
      .slice(shares[kind]),
  );
}

/** Those of `objects` that `uid` made or owns. */
export const ownedBy = (objects: readonly IpcObject[], uid: number): IpcObject[] => objects.filter((o) => o.uid === uid || o.cuid === uid);

/**
 * Removes `objects`, which the tenant `asTenant` runs as made or owns, as that tenant: the kernel lets a System V
 * object's owner or creator remove it (ipcrm), and root only with CAP_SYS_ADMIN, which a container's root lacks; a
 * POSIX message queue's file goes with rm, which the sticky MQUEUE_DIR allows its owner alone, so a name another
 * tenant took meanwhile stays theirs. One gone meanwhile is no failure.
 */
export async function removeIpcObjects(objects: readonly IpcObject[], asTenant: TenantCommand): Promise<void> {
  const ids = objects.flatMap((o) => (o.kind === "mqueue" ? [] : [KINDS.find((k) => k.kind === o.kind)!.flag, String(o.id)]));
  for (let i = 0; i < ids.length; i += 2 * IDS_PER_RUN) await runAsTenant(asTenant, "ipcrm", ids.slice(i, i + 2 * IDS_PER_RUN));
  const queues = objects.flatMap((o) => (o.kind === "mqueue" ? [o.path] : []));
  for (let i = 0; i < queues.length; i += PATHS_PER_RUN) await runAsTenant(asTenant, "rm", ["-f", "--", ...queues.slice(i, i + PATHS_PER_RUN)]);
}

async function runAsTenant(asTenant: TenantCommand, command: "ipcrm" | "rm", args: string[]): Promise<void> {
  const run = asTenant(command, args);
  await execFileAsync(run.command, run.args, { env: {}, timeout: AS_TENANT_TIMEOUT_MS }).catch((err: { code?: unknown }) => {
    // 127: the wrapper (setpriv) found no such program; its messages are not matched, since they quote the names a tenant chose
    if (err.code === "ENOENT" || err.code === 127) throw new Error(`${command} is not installed: tenants' IPC objects cannot be removed`);
    // both go on past what is gone meanwhile and exit 1: the next listing shows what is left
  });
}
