// What runs on the machine, as the kernel lists it: for tests that check a call's processes are gone,
// and a live process standing in for another hub in the lock tests.
import { spawn, type ChildProcess } from "node:child_process";
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

/** A live process other than this one, standing in for another hub. */
export async function otherProcess(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  await new Promise((resolve) => child.once("spawn", resolve));
  return child;
}

/** Resolves once `child` has exited (at once if it has). */
export const ended = (child: ChildProcess) => new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once("exit", resolve)));
