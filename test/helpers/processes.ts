// What runs on the machine, as the kernel lists it: for tests that check a call's processes are gone.
import fs from "node:fs";

/** Processes whose command line (its arguments joined by spaces) holds `marker`, as the kernel lists them (whoever runs them). */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").includes(marker)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
