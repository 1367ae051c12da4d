// The tenant's disk budget as its servers see it. The hub measures what the tenant's uid uses
// (hub/tenants/disk-budget.ts) and publishes it in a file the tenant can read but not write, named by
// AGENTBOX_DISK_BUDGET_FILE. A write is checked against it before it starts, so a file tool says
// "disk budget used up" instead of failing halfway; the kernel (RLIMIT_FSIZE) refuses what gets
// past this check, and those errors get the same explanation.
import fs from "node:fs";
import { ToolError } from "./tool.js";

export const DISK_BUDGET_FILE_ENV = "AGENTBOX_DISK_BUDGET_FILE";

export interface DiskUse {
  usedBytes: number;
  budgetBytes: number;
  /** A filesystem other than the workspace's where the tenant holds its share or more (hub/tenants/filesystem-shares.ts). */
  full?: { folders: string[]; usedBytes: number; shareBytes: number };
}

const MIB = 1024 * 1024;
const mib = (bytes: number) => (bytes / MIB).toFixed(1);
const WHAT_TO_DO = "Delete files you no longer need (in the workspace, ~ or $TMPDIR), then retry.";

/** The last measurement the hub published, or undefined when there is no budget (or none yet). */
export async function readDiskUse(file = process.env[DISK_BUDGET_FILE_ENV]): Promise<DiskUse | undefined> {
  if (!file) return undefined;
  try {
    // a small file the hub replaces whole: read in place (servers/lib/open-file.ts says why)
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<DiskUse>;
    if (typeof parsed.usedBytes === "number" && typeof parsed.budgetBytes === "number") {
      const { usedBytes, budgetBytes, full } = parsed;
      return { usedBytes, budgetBytes, ...(full && Array.isArray(full.folders) ? { full } : {}) };
    }
  } catch {
    // not measured yet, or no budget: the kernel's limit still holds
  }
  return undefined;
}

/** Whether the tenant's writes are refused: its budget used up, or its share of a smaller filesystem. */
export const usedUp = (use: DiskUse) => use.usedBytes >= use.budgetBytes || use.full !== undefined;

export const usedUpMessage = (use: DiskUse) =>
  use.full
    ? `Disk share used up: this tenant's files in ${use.full.folders.join(", ")} take ${mib(use.full.usedBytes)} of the ${mib(use.full.shareBytes)} MiB it may hold on that filesystem, which is smaller than the workspace's and shared with other tenants, so writes are refused everywhere until it deletes files there (${mib(use.usedBytes)} of its ${mib(use.budgetBytes)} MiB budget in all). Delete files you no longer need in ${use.full.folders.join(", ")}, then retry.`
    : `Disk budget used up: this tenant's files take ${mib(use.usedBytes)} of its ${mib(use.budgetBytes)} MiB (workspace, home and temporary files together), so writes are refused. ${WHAT_TO_DO}`;

/** Refuse a write that would take the tenant past its budget: `growthBytes` is how much it adds. */
export async function assertDiskRoom(growthBytes: number): Promise<void> {
  const use = await readDiskUse();
  if (!use) return;
  if (usedUp(use)) throw new ToolError(usedUpMessage(use));
  const left = use.budgetBytes - use.usedBytes;
  if (growthBytes > left) {
    throw new ToolError(
      `Writing ${mib(growthBytes)} MiB would go over the disk budget: this tenant's files take ${mib(use.usedBytes)} of its ${mib(use.budgetBytes)} MiB, ${mib(left)} MiB left. ${WHAT_TO_DO}`,
    );
  }
}

/** A write error explained when it is about space (the budget's kernel limit, or a full disk); other errors unchanged. */
export async function explainDiskError(err: unknown, shown: string): Promise<unknown> {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === "EFBIG") {
    const use = await readDiskUse();
    if (use && usedUp(use)) return new ToolError(usedUpMessage(use));
    const budget = use ? `the disk budget, ${mib(use.budgetBytes)} MiB` : "the file size limit";
    return new ToolError(`Writing '${shown}' was refused: it would grow past ${budget}, or the disk budget is used up. ${WHAT_TO_DO}`);
  }
  if (code === "ENOSPC" || code === "EDQUOT") return new ToolError(`Writing '${shown}' failed: no space left on the disk. ${WHAT_TO_DO}`);
  return err;
}

/**
 * What a command that died of the file size limit (SIGXFSZ; bash reports 128 + 25) is told: the
 * limit is the tenant's disk budget, per file and, once the budget is used up, for every write.
 */
export async function fileSizeLimitNote(exit: { exitCode: number | null; signal: string | null }): Promise<string | undefined> {
  // no budget file: no budget set the limit (the command may have set `ulimit -f` itself)
  if ((exit.signal !== "SIGXFSZ" && exit.exitCode !== 128 + 25) || !process.env[DISK_BUDGET_FILE_ENV]) return undefined;
  const use = await readDiskUse();
  if (!use) return `A write hit the file size limit, which is this tenant's disk budget (not measured yet; no file may grow past it). ${WHAT_TO_DO}`;
  if (use.full) return `A write hit the file size limit: ${usedUpMessage(use)}`;
  const state = usedUp(use) ? "used up" : `${mib(use.budgetBytes - use.usedBytes)} MiB left`;
  return `A write hit the file size limit, which is this tenant's disk budget (${mib(use.usedBytes)} of ${mib(use.budgetBytes)} MiB, ${state}; no file may grow past it). ${WHAT_TO_DO}`;
}
