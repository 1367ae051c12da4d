// What runs on the machine, as the kernel lists it: for tests that check a call's processes are gone,
// a live process standing in for another hub in the lock tests, and how an agent keeps a process
// running past its command.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, textOf } from "./hub.js";

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

/** The pids a command printed, one per line or word. */
export const pidsIn = (text: string) => text.split(/\s+/).filter(Boolean).map(Number);

/** Resolves once `child` has exited (at once if it has). */
export const ended = (child: ChildProcess) => new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once("exit", resolve)));

/**
 * A command line that leaves processes running past its terminal_exec call, as a hostile agent
 * does: `command` starts daemons (`env -i`, `setsid`: no group, session or marker of the command's),
 * then the command kills its subreaper (servers/terminal/reaper.ts), which would end them with
 * the command. The server finds the rest of the command by its links and marker; the daemons
 * are the sweeper's to judge (hub/tenants/sweeper.ts). The call ends by SIGKILL, its stdout kept.
 */
const escapingReaper = (command: string) => `${command}; sleep 0.5; kill -KILL $PPID; sleep 30`;

/** Run `command` through terminal_exec as escapingReaper has it; its stdout. */
export async function execEscaping(client: Client, command: string): Promise<string> {
  const result = await call(client, "terminal_exec", { command: escapingReaper(command), timeoutMs: 60_000 });
  const outcome = result.structuredContent as { signal: string | null; stdout: string } | undefined;
  assert.equal(outcome?.signal, "SIGKILL", `the command was to kill its reaper: ${textOf(result).slice(0, 2000)}`);
  return outcome.stdout;
}
