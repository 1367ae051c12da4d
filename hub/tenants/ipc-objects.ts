// System V IPC objects (shared memory segments, semaphore sets, message queues) outlive the
// processes that make them: a command can fill a gigabyte of shared memory, detach and exit, and
// the memory stays taken, past its session and past the hub, counted against no limit of its
// tenant's processes. So they go the way of a tenant's escaped processes (./sweeper.ts): removed
// once the tenant has no live session, before the hub listens and when it stops. An object is a
// tenant's when its uid made it or owns it (its owner can give it to another uid; its creator stays).
// The kernel's count of each kind is shared by the whole machine (4,096 shared memory segments by
// default): a tenant holding more than its share of one kind has the newest beyond it removed, so
// one tenant cannot leave the others none.
import { execFile } from "node:child_process";
import fsp from "node:fs/promises";
import { promisify } from "node:util";
import { nextTurn } from "../../servers/lib/open-file.js";
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
/** Objects of each kind a tenant may hold at once: a sixteenth of the kernel's default count of segments. */
export const IPC_SHARE = 256;

export interface IpcObject {
  kind: (typeof KINDS)[number]["kind"];
  id: number;
  uid: number;
  cuid: number;
  /** A shared memory segment's size in bytes (0 for the others). */
  bytes: number;
  /** When it was made or last changed (ctime, seconds since the epoch): the newest go first when a tenant holds too many. */
  changed: number;
}

/** Reads one row of a /proc/sysvipc table whose header is `header`; columns are found by name, which differ by kind and kernel. */
function rowReader(kind: IpcObject["kind"], header: string): ((row: string) => IpcObject | undefined) | undefined {
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

/**
 * The IPC objects that a uid of `uids` made or owns (rows of a table that are not whole are skipped). A tenant can fill
 * a table (32,000 semaphore sets: 38 ms to read in one go), so rows are read a slice at a time, other work running
 * between slices.
 */
export async function ipcObjectsOf(uids: ReadonlySet<number>, readTable = (file: string) => fsp.readFile(file, "utf8")): Promise<IpcObject[]> {
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
  return found;
}

/** Of one tenant's objects, those beyond its share of their kind: the newest, so what its programs set up first stays. */
export function overShare(own: readonly IpcObject[], share = IPC_SHARE): IpcObject[] {
  return KINDS.flatMap(({ kind }) =>
    own
      .filter((o) => o.kind === kind)
      .sort((a, b) => a.changed - b.changed || a.id - b.id)
      .slice(share),
  );
}

/** Those of `objects` that `uid` made or owns. */
export const ownedBy = (objects: readonly IpcObject[], uid: number): IpcObject[] => objects.filter((o) => o.uid === uid || o.cuid === uid);

/**
 * Removes `objects`, which the tenant `asTenant` runs as made or owns, with ipcrm run as that tenant: the kernel lets
 * an object's owner or creator remove it, and root only with CAP_SYS_ADMIN, which a container's root lacks. One gone
 * meanwhile is no failure.
 */
export async function removeIpcObjects(objects: readonly IpcObject[], asTenant: TenantCommand): Promise<void> {
  const args = objects.flatMap((o) => [KINDS.find((k) => k.kind === o.kind)!.flag, String(o.id)]);
  for (let i = 0; i < args.length; i += 2 * IDS_PER_RUN) {
    const run = asTenant("ipcrm", args.slice(i, i + 2 * IDS_PER_RUN));
    await execFileAsync(run.command, run.args, { env: {}, timeout: AS_TENANT_TIMEOUT_MS }).catch((err: NodeJS.ErrnoException & { stderr?: string }) => {
      if (err.code === "ENOENT" || /ipcrm.*(No such file|not found)/.test(err.stderr ?? ""))
        throw new Error("ipcrm (util-linux) is not installed: tenants' System V IPC objects cannot be removed");
      // ipcrm goes on past an id that is gone meanwhile and exits 1: the next listing shows what is left
    });
  }
}
