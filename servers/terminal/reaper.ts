// The command's subreaper (./reaper/agentbox-reaper.c): everything a command starts stays below
// it, so when the command exits the reaper ends what is left and reports how many it killed, and
// the server need not scan the process table for them. Without the compiled helper (no C compiler
// at build time) commands run as before and every end is a scan.
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { executable } from "./program.js";

// dist/servers/terminal/ (the bundle keeps this module's own location): the helper is in dist/bin/
const helper = fileURLToPath(new URL("../../bin/agentbox-reaper", import.meta.url));
const reaper = executable(helper) ? helper : undefined;

/** The descriptor the reaper writes its report to: the child's fourth stdio entry. */
const REPORT_FD = 3;

/** The program and arguments that run `argv` under the reaper, or `argv` itself without it. */
export function underReaper(argv: [string, ...string[]]): { file: string; args: string[]; reported: boolean } {
  if (!reaper) return { file: argv[0], args: argv.slice(1), reported: false };
  return { file: reaper, args: [String(REPORT_FD), ...argv], reported: true };
}

// a report is one short line; anything longer is not the reaper's
const MAX_REPORT = 32;

/**
 * How many leftovers the reaper killed, once it has reported that nothing of the command is left;
 * undefined when no report came (no reaper, or it was killed before it finished: scan then).
 */
export function reportOf(stream: Readable | null | undefined): Promise<number | undefined> {
  if (!stream) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let text = "";
    stream.setEncoding("latin1");
    stream.on("data", (chunk: string) => {
      text = (text + chunk).slice(0, MAX_REPORT + 1);
    });
    stream.once("error", () => resolve(undefined));
    stream.once("close", () => resolve(/^\d{1,9}\n$/.test(text) ? Number(text.trimEnd()) : undefined));
  });
}
