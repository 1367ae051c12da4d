// Where the launcher's socket lives: a folder of its own in the temporary folder, which only this
// server's user may enter (mkdtemp makes it 0700). A server killed outright leaves its folder
// behind; the next one started by the same user removes those no socket listens in any more.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const PREFIX = "agentbox-launch-";
const SOCKET = "s";
// a folder just made by another server of this user may not have its socket bound yet
const STALE_AFTER_MS = 60_000;
// a Unix socket's path holds 107 bytes at most
const MAX_SOCKET_PATH = 107;

/** A new private folder and the socket path in it. */
export function launcherFolder(tmp = os.tmpdir()): { dir: string; socketPath: string } {
  removeStale(tmp);
  const dir = fs.mkdtempSync(path.join(tmp, PREFIX));
  const socketPath = path.join(dir, SOCKET);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`the temporary folder's path is too long for a socket: ${socketPath}`);
  }
  return { dir, socketPath };
}

function removeStale(tmp: string): void {
  try {
    // every bound Unix socket's path is the last field of its line
    const listening = new Set(
      fs
        .readFileSync("/proc/net/unix", "latin1")
        .split("\n")
        .map((line) => line.slice(line.lastIndexOf(" ") + 1)),
    );
    for (const name of fs.readdirSync(tmp)) {
      if (!name.startsWith(PREFIX)) continue;
      const dir = path.join(tmp, name);
      const stat = fs.lstatSync(dir);
      const stale = stat.isDirectory() && stat.uid === process.getuid?.() && Date.now() - stat.mtimeMs > STALE_AFTER_MS;
      if (stale && !listening.has(path.join(dir, SOCKET))) fs.rmSync(dir, { recursive: true, force: true });
    }
  } catch {
    // a folder gone meanwhile, or no /proc: nothing to tidy
  }
}
