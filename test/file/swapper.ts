// The attacker's side of a check-then-use race: a separate process (as an agent's command would be)
// that keeps swapping a workspace entry between the real thing and a symlink pointing outside.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";

// rename out, link in, link out, rename back: every state the tools may meet, as fast as it goes
const SCRIPT = `
import os, shutil, sys
target, stash, outside = sys.argv[1], sys.argv[2], sys.argv[3]
print("ready", flush=True)
while True:
    try:
        if os.path.lexists(stash):
            # a tool made a new folder at the name while it was free: clear it and go on swapping
            shutil.rmtree(target) if os.path.isdir(target) and not os.path.islink(target) else os.unlink(target)
            os.rename(stash, target)
        os.rename(target, stash)
        os.symlink(outside, target)
        os.unlink(target)
        os.rename(stash, target)
    except OSError:
        pass
`;

export interface Swapper {
  /** Stop swapping and put the real entry back at its name. */
  stop(): Promise<void>;
}

/** Swap `target` (a file or folder) with a symlink to `outside` until stopped; the real entry waits at `stash`. */
export async function startSwapper(target: string, outside: string): Promise<Swapper> {
  const stash = `${target}.stash`;
  const child: ChildProcess = spawn("/usr/bin/python3", ["-c", SCRIPT, target, stash, outside], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    child.once("error", reject);
    child.stdout!.once("data", () => resolve());
  });
  return {
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        await exited;
      }
      // the real entry goes back; anything a tool made at the free name meanwhile is dropped
      if (fs.lstatSync(stash, { throwIfNoEntry: false })) {
        fs.rmSync(target, { recursive: true, force: true });
        fs.renameSync(stash, target);
      }
    },
  };
}

/** Run fn while `target` is being swapped with a link to `outside`. */
export async function whileSwapping<T>(target: string, outside: string, fn: () => Promise<T>): Promise<T> {
  const swapper = await startSwapper(target, outside);
  try {
    return await fn();
  } finally {
    await swapper.stop();
  }
}

/**
 * How many tries each race gets. The unfixed code leaked in hundreds of 300, so half as many still
 * catch it by the dozen, at half the CPU: the swapper spins a core for as long as the tries last.
 */
export const RACE_TRIES = 150;

/** How many of a race's calls are in flight at once. */
const IN_FLIGHT = 4;

/**
 * Calls `attempt` RACE_TRIES times, a few in flight at once, as an agent's parallel tool calls are:
 * each meets the swapper at its own moment, and the tries take a fraction of the time one by one.
 */
export async function tries<T>(attempt: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < RACE_TRIES; i += IN_FLIGHT) {
    results.push(...(await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, RACE_TRIES - i) }, (_, k) => attempt(i + k)))));
  }
  return results;
}
