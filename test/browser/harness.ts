// Shared by the browser tests: a hub running only the browser server, the local test site, and
// helpers to call browser_* tools and pick refs out of snapshots.
import { spawnSync } from "node:child_process";
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { call, startHub, textOf, type TestHub } from "../helpers/hub.js";
import { startSite, type Site } from "../fixtures/browser/site.js";
import { descendantsOf, realUid } from "../../servers/lib/proc-table.js";

export { textOf };

export interface Harness {
  hub: TestHub;
  site: Site;
  workspace: string;
  stop(): Promise<void>;
}

export async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const site = await startSite();
  const hub = await startHub({ servers: ["browser"], env });
  return {
    hub,
    site,
    workspace: hub.workspace,
    async stop() {
      await hub.stop();
      await site.close();
    },
  };
}

/** Call browser_<tool>; fails the test when the tool reports an error. */
export async function ok(client: Client, tool: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  const result = await call(client, `browser_${tool}`, args);
  assert.ok(!result.isError, `browser_${tool} failed: ${textOf(result)}`);
  return result;
}

/** Call browser_<tool> expecting an error result; returns its text. */
export async function fails(client: Client, tool: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = await call(client, `browser_${tool}`, args);
  assert.equal(result.isError, true, `browser_${tool} should have failed: ${textOf(result)}`);
  return textOf(result);
}

/** The ref of the first snapshot line containing `needle`, e.g. refOf(text, 'button "Send"'). */
export function refOf(snapshot: string, needle: string): string {
  const line = snapshot.split("\n").find((l) => l.includes(needle) && /\[ref=/.test(l));
  assert.ok(line, `no element with ${needle} in snapshot:\n${snapshot}`);
  return line.match(/\[ref=([^\]]+)\]/)![1];
}

/** Evaluate an expression in the current tab and return its structured result. */
export async function evaluate(client: Client, code: string): Promise<unknown> {
  const result = await ok(client, "evaluate", { code });
  return (result.structuredContent as { result: unknown }).result;
}

/** A loopback port free right now, for AGENTBOX_CDP_PORT. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Socket inodes of TCP sockets in LISTEN state (IPv4 and IPv6), mapped to their local port. */
export function tcpListeners(): Map<string, number> {
  return new Map([...listenerRows()].map(([inode, row]) => [inode, row.port]));
}

/** Listening TCP sockets by inode, with their port and owner uid. */
function listenerRows(): Map<string, { port: number; uid: number }> {
  const found = new Map<string, { port: number; uid: number }>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of fs.readFileSync(table, "utf8").split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] === "0A") found.set(cols[9], { port: parseInt(cols[1].split(":").at(-1)!, 16), uid: Number(cols[7]) });
    }
  }
  return found;
}

/** The process and all its descendants, from /proc. */
export function processTree(root: number): number[] {
  return [root, ...descendantsOf(root).map((p) => p.pid)];
}

/** Socket inodes the processes hold open. */
export function socketInodes(pids: number[]): Set<string> {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch (err) {
      // root in a container has no CAP_SYS_PTRACE: the process's own uid lists its descriptors
      if ((err as NodeJS.ErrnoException).code === "EACCES") for (const inode of socketsAsOwner(pid)) inodes.add(inode);
      continue;
    }
    for (const fd of fds) {
      try {
        const link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
        const inode = link.match(/^socket:\[(\d+)\]$/)?.[1];
        if (inode) inodes.add(inode);
      } catch {
        // closed meanwhile
      }
    }
  }
  return inodes;
}

function socketsAsOwner(pid: number): string[] {
  const uid = realUid(pid);
  if (uid === undefined) return [];
  const out = spawnSync(
    "setpriv",
    [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", "--", "find", `/proc/${pid}/fd`, "-mindepth", "1", "-lname", "socket:*", "-printf", "%l\n"],
    { encoding: "utf8" },
  );
  return (out.stdout ?? "").split("\n").flatMap((l) => l.match(/^socket:\[(\d+)\]$/)?.[1] ?? []);
}

/** Ports Chromium (the process tree under pid) listens on that were not listening in `before`. */
export function newChromiumListeners(pid: number, before: Map<string, number>): number[] {
  const owned = socketInodes(processTree(pid));
  // Chromium may make itself undumpable, and root in a container cannot read such a process's
  // descriptors: a socket owned by the tenant's own uid (not the hub's) is its then
  const uid = realUid(pid);
  const tenantUid = uid !== process.getuid?.() ? uid : undefined;
  return [...listenerRows()].filter(([inode, row]) => !before.has(inode) && (owned.has(inode) || row.uid === tenantUid)).map(([, row]) => row.port);
}
