// What a node process's young-generation collections kept, read from its --trace-gc-nvp lines:
// bytes allocated and bytes promoted to the old generation, added over every scavenge. A call
// path that keeps finished calls alive through a scavenge shows as promoted bytes per call, which
// CPU per call hides among other costs (bench/README.md: how a Map the calls passed through, and an
// object literal with a getter, promoted most of each call). The relay bench records it per call.
import readline from "node:readline";
import type { Readable } from "node:stream";

/** The node flag that makes a process print one line per collection. */
export const GC_TRACE_FLAG = "--trace-gc-nvp";

export interface ScavengeTotals {
  scavenges: number;
  allocated: number;
  promoted: number;
}

const FIELD = /\b(allocated|promoted)=(\d+)/g;

/** Adds up the scavenges `output` reports from now on; `totals()` reads the sums so far. */
export function watchScavenges(output: Readable): { totals(): ScavengeTotals } {
  const sums: ScavengeTotals = { scavenges: 0, allocated: 0, promoted: 0 };
  readline.createInterface({ input: output }).on("line", (line) => {
    if (!line.includes(" gc=s ")) return;
    sums.scavenges++;
    for (const [, field, value] of line.matchAll(FIELD)) sums[field as "allocated" | "promoted"] += Number(value);
  });
  return { totals: () => ({ ...sums }) };
}
