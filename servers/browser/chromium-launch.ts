// What Chromium needs from the browser server to start wherever a tenant's folders are, and what
// it says when it cannot. Chromium binds its singleton socket at
// $TMPDIR/.org.chromium.Chromium.XXXXXX/SingletonSocket, and a Unix socket path holds at most 107
// bytes: under a tenant's TMPDIR (<state dir>/tenants/<tenant>-<uid>/tmp) a long tenant name or
// a deep AGENTBOX_STATE_DIR made it abort ("Socket path too long"). So Chromium gets a temp folder
// of its own in a short place, made by this server (the tenant's uid, mode 0700: no other tenant
// can enter it) and removed once that Chromium is gone.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const PREFIX = "agentbox-chromium-";
// what Chromium adds under its TMPDIR, and the NUL ending a socket path (sun_path is 108 bytes)
const CHROMIUM_SOCKET_TAIL = "/.org.chromium.Chromium.XXXXXX/SingletonSocket";
const SOCKET_PATH_MAX = 107;

/** Whether a folder made under `root` leaves room for Chromium's socket path. */
function shortEnough(root: string): boolean {
  return path.join(root, `${PREFIX}XXXXXX`).length + CHROMIUM_SOCKET_TAIL.length <= SOCKET_PATH_MAX;
}

/** Where Chromium's temp folder may go: the server's own TMPDIR when short enough, else /tmp. */
export function defaultTempRoots(): string[] {
  return [os.tmpdir(), "/tmp"].filter(shortEnough);
}

/**
 * A new private folder (mode 0700, this process's uid) in the first of `roots` that takes one, or
 * undefined when none does (Chromium then uses the inherited TMPDIR, and says why if it fails).
 */
export function makeChromiumTemp(roots: readonly string[]): string | undefined {
  for (const root of roots) {
    try {
      return fs.mkdtempSync(path.join(root, PREFIX));
    } catch {
      // not writable here (a read-only /tmp): the next
    }
  }
  return undefined;
}

/** Never throws: it runs in Chromium's disconnect handler, where an error would end the server. */
export function removeChromiumTemp(dir: string | undefined): void {
  if (!dir) return;
  try {
    fs.rmSync(dir, { recursive: true, force: true });
  } catch {
    // a file Chromium left that this uid cannot remove: the disk budget still counts it as the tenant's
  }
}

/**
 * Chromium's own reason for failing to start, from Playwright's launch error, which quotes the
 * browser's stderr as `[pid=N][err] …` lines: the fatal line when there is one (crash reporter
 * noise may follow it), else the last line it wrote. Chromium's log prefix
 * (`[pid:tid:time:FATAL:file.cc:315] `) is dropped.
 */
export function launchFailureReason(message: string): string | undefined {
  const said = [...message.matchAll(/^\[pid=\d+\]\[err\] (.*)$/gm)].map((m) => m[1].trim()).filter(Boolean);
  const line = said.find((l) => /^\[[^\]]*:FATAL:[^\]]*\]/.test(l)) ?? said.at(-1);
  return line?.replace(/^\[[^\]]*:(?:FATAL|ERROR|WARNING|INFO|VERBOSE\d*):[^\]]*\]\s*/, "");
}
