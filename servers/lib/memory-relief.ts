// When memory ran short and the hub ended a tenant's largest processes (hub/tenants/memory-guard.ts),
// it says so in a file the tenant's servers can read but not write, named by
// AGENTBOX_MEMORY_RELIEF_FILE: a command that died of it is then told why, instead of a bare "Killed"
// an agent would only run again.
import fs from "node:fs";

export const MEMORY_RELIEF_FILE_ENV = "AGENTBOX_MEMORY_RELIEF_FILE";

/** The hub's last relief of this tenant. */
export interface MemoryRelief {
  /** When, in ms since the epoch. */
  at: number;
  pids: number[];
  endedMiB: number;
  /** What the tenant held in all, the most of any. */
  tenantMiB: number;
}

/** The last relief, or undefined when there was none (or no file to say so). */
export function readMemoryRelief(file = process.env[MEMORY_RELIEF_FILE_ENV]): MemoryRelief | undefined {
  if (!file) return undefined;
  try {
    // a small file the hub replaces whole: read in place (servers/lib/open-file.ts says why)
    const relief = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<MemoryRelief>;
    if (typeof relief.at === "number" && Array.isArray(relief.pids) && typeof relief.endedMiB === "number" && typeof relief.tenantMiB === "number")
      return relief as MemoryRelief;
  } catch {
    // none yet
  }
  return undefined;
}

/** What a command that ran from `startedAt` until now is told when the hub ended this tenant's processes meanwhile. */
export function memoryReliefNote(startedAt: number, file?: string): string | undefined {
  const relief = readMemoryRelief(file);
  if (!relief || relief.at < startedAt || relief.at > Date.now()) return undefined;
  return (
    `Memory ran short while this ran, and this tenant held the most (${relief.tenantMiB} MiB): the hub ended its largest processes ` +
    `(pids ${relief.pids.join(", ")}, ${relief.endedMiB} MiB) so the others could go on. Use less memory at once (smaller batches, fewer processes in parallel), then retry.`
  );
}
