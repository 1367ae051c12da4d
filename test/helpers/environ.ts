// A process's environment, as a test reads it: directly where root may (CAP_SYS_PTRACE), else as the
// process's own uid, as in a container with Docker's default capabilities, where root may not read
// another uid's /proc/<pid>/environ.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { realUid } from "../../servers/lib/proc-table.js";

export function environOf(pid: number): Buffer {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`);
  } catch (err) {
    const uid = realUid(pid);
    if ((err as NodeJS.ErrnoException).code !== "EACCES" || uid === undefined) throw err;
    const read = spawnSync("setpriv", [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "cat", `/proc/${pid}/environ`], { maxBuffer: 64 * 1024 * 1024 });
    if (read.status !== 0) throw new Error(`cannot read the environment of ${pid} as uid ${uid}: ${read.stderr.toString()}`, { cause: err });
    return read.stdout;
  }
}
