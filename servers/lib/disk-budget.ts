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
    if (typeof parsed.usedBytes === "number" && typeof parsed.budgetBytes === "number") return { usedBytes: parsed.usedBytes, budgetBytes: parsed.budgetBytes };
  } catch {
    // not measured yet, or no budget: the kernel's limit still holds
  }
  return undefined;
}

export const usedUpMessage = (use: DiskUse) =>
  `Disk budget used up: this tenant's files take ${mib(use.usedBytes)} of its ${mib(use.budgetBytes)} MiB (workspace, home and temporary files together), so writes are refused. ${WHAT_TO_DO}`;

/** Refuse a write that would take the tenant past its budget: `growthBytes` is how much it adds. */
export async function assertDiskRoom(growthBytes: number): Promise<void> {
  const use = await readDiskUse();
  if (!use) return;
  if (use.usedBytes >= use.budgetBytes) throw new ToolError(usedUpMessage(use));
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
    if (use && use.usedBytes >= use.budgetBytes) return new ToolError(usedUpMessage(use));
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
  const state = use.usedBytes >= use.budgetBytes ? "used up" : `${mib(use.budgetBytes - use.usedBytes)} MiB left`;
  return `A write hit the file size limit, which is this tenant's disk budget (${mib(use.usedBytes)} of ${mib(use.budgetBytes)} MiB, ${state}; no file may grow past it). ${WHAT_TO_DO}`;
}
