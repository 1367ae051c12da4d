// A tenant's disk budget is a share of the workspace's filesystem, counted over everything its uid
// owns wherever it is. A tenant also writes other filesystems, which may be far smaller: `/tmp` as a
// tmpfs (the read-only deploy's `--tmpfs /tmp`, which then also holds the tenants' homes; Fedora's
// and Arch's /tmp), `/run/lock` (5 MiB on a bare Debian host), the container's root when the
// workspace is a volume on a larger disk. Within its budget one tenant could fill such a filesystem
// and leave the others none (in RAM, for a tmpfs). So on each of them a tenant may hold the same
// fraction as of the workspace's (90% shared equally, DiskLimit.filesystemShare), and no more than
// its budget; past it the tenant is frozen like a tenant over its budget (./disk-budget.ts).
// /dev/shm has a share and a sweep of its own (./shm-files.ts).
import fsp from "node:fs/promises";
import { deviceOf, SHARED_WRITABLE_DIRS } from "./disk-usage.js";
import type { BudgetedTenant } from "./frozen-tenant.js";
import { SHM_DIR } from "./shm-files.js";

/** A filesystem tenants write other than their workspaces' and /dev/shm. */
export interface OtherFilesystem {
  device: number;
  sizeBytes: number;
}

/** Where a tenant holds its share of a filesystem or more: the folders of its on it, what it holds there and may. */
export interface FullFilesystem {
  folders: string[];
  usedBytes: number;
  shareBytes: number;
}

export interface FilesystemShares {
  /** The first filesystem it holds its share of, or more. */
  full?: FullFilesystem;
  /** The least room it has left on any of them (Infinity: none to watch). */
  roomBytes: number;
}

/** The size of the filesystem that holds `dir`. */
export async function sizeOn(dir: string): Promise<number | undefined> {
  const info = await fsp.statfs(dir).catch(() => undefined);
  return info && info.blocks * info.bsize;
}

/** The filesystems of the walk's roots that are neither a tenant's workspace's nor /dev/shm's, with their sizes. */
export async function otherFilesystems(roots: string[], tenants: readonly BudgetedTenant[], size = sizeOn): Promise<OtherFilesystem[]> {
  const skipped = new Set<number | undefined>();
  for (const dir of new Set([...tenants.map((t) => t.workspace), SHM_DIR])) skipped.add(await deviceOf(dir));
  const found = new Map<number, OtherFilesystem>();
  for (const root of roots) {
    const device = await deviceOf(root);
    if (device === undefined || skipped.has(device) || found.has(device)) continue;
    const sizeBytes = await size(root);
    if (sizeBytes) found.set(device, { device, sizeBytes });
  }
  return [...found.values()];
}

/** What the tenant holds of each other filesystem (`byDevice`, from the walk) against its share of it. */
export async function sharesOf(
  tenant: BudgetedTenant,
  byDevice: Map<number, number> | undefined,
  others: readonly OtherFilesystem[],
): Promise<FilesystemShares> {
  const { budgetBytes, filesystemShare } = tenant.identity!.disk;
  let roomBytes = Infinity;
  if (filesystemShare === undefined) return { roomBytes };
  for (const { device, sizeBytes } of others) {
    const shareBytes = Math.min(budgetBytes, Math.floor(filesystemShare * sizeBytes));
    const usedBytes = byDevice?.get(device) ?? 0;
    if (usedBytes >= shareBytes) return { full: { folders: await foldersOn(tenant, device), usedBytes, shareBytes }, roomBytes: 0 };
    roomBytes = Math.min(roomBytes, shareBytes - usedBytes);
  }
  return { roomBytes };
}

/** The folders the tenant writes that are on `device`: its own and the shared ones, never another tenant's. */
async function foldersOn(tenant: BudgetedTenant, device: number): Promise<string[]> {
  const folders: string[] = [];
  for (const dir of [tenant.home!, tenant.tmp!, ...SHARED_WRITABLE_DIRS]) if ((await deviceOf(dir)) === device) folders.push(dir);
  return folders;
}
