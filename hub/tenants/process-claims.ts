// The session claims (servers/lib/session-claim.ts) of a tenant's processes, read for the
// sweeper. A process makes its environment as large as it likes: only a fixed prefix of each is
// read, off the event loop, so what a tenant controls never costs the hub's event loop in
// proportion to its size. The servers put the claim first in what they start.
import type * as NodeFs from "node:fs";
import { readStart } from "../../servers/lib/proc-table.js";
import { SESSION_CLAIM_ENV } from "../../servers/lib/session-claim.js";
import { runAsTenantScript, type TenantCommand } from "./tenant-script.js";

/** How much of a process's environment is read for its claim. */
export const ENVIRON_PREFIX_BYTES = 32 * 1024;
const READERS_AT_ONCE = 4;
const AS_TENANT_TIMEOUT_MS = 10_000;
const CLAIM_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export type { TenantCommand } from "./tenant-script.js";

/** The claim in (the start of) an environment; one cut short by the prefix is no claim. */
export function claimIn(environ: Buffer): string | undefined {
  const key = Buffer.from(`${SESSION_CLAIM_ENV}=`);
  let start = environ.subarray(0, key.length).equals(key) ? 0 : -1;
  if (start < 0) {
    const at = environ.indexOf(Buffer.concat([Buffer.from([0]), key]));
    if (at < 0) return undefined;
    start = at + 1;
  }
  const end = environ.indexOf(0, start);
  if (end < 0) return undefined;
  const value = environ.subarray(start + key.length, end).toString("latin1");
  return CLAIM_SHAPE.test(value) ? value : undefined;
}

/**
 * The claims of some processes (undefined: none, or unreadable). Root reads them directly where it
 * has CAP_SYS_PTRACE; in a container without it (Docker's default) a reader run as the tenant
 * does, in a process of its own.
 */
export async function readClaims(pids: number[], asTenant: TenantCommand): Promise<Map<number, string | undefined>> {
  const claims = new Map<number, string | undefined>();
  const denied: number[] = [];
  let next = 0;
  const reader = async () => {
    const buffer = Buffer.alloc(ENVIRON_PREFIX_BYTES);
    while (next < pids.length) {
      const pid = pids[next++];
      try {
        claims.set(pid, claimIn(await readStart(`/proc/${pid}/environ`, buffer)));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EACCES") denied.push(pid);
      }
    }
  };
  await Promise.all(Array.from({ length: READERS_AT_ONCE }, reader));
  if (denied.length) for (const [pid, claim] of await readClaimsAsTenant(denied, asTenant)) claims.set(pid, claim);
  return claims;
}

// Run by the tenant's uid: prints "<pid> <claim>" per pid, reading the same bounded prefix.
function tenantReader(prefixBytes: number, key: string, pids: string[]): void {
  // runs as `node -e` under the tenant's uid (./tenant-script.ts)
  const fs = process.getBuiltinModule("node:fs") as typeof NodeFs;
  const buffer = Buffer.alloc(prefixBytes);
  for (const pid of pids) {
    let claim = "";
    try {
      const fd = fs.openSync(`/proc/${pid}/environ`, "r");
      const read = fs.readSync(fd, buffer, 0, prefixBytes, 0);
      fs.closeSync(fd);
      const entry = buffer
        .subarray(0, read)
        .toString("latin1")
        .split("\0")
        .find((e) => e.startsWith(key));
      claim = entry ? entry.slice(key.length, key.length + 64) : "";
    } catch {
      // gone, or not the tenant's
    }
    process.stdout.write(`${pid} ${claim}\n`);
  }
}

/** The claims read by a process run as the tenant (exported for its test). */
export async function readClaimsAsTenant(pids: number[], asTenant: TenantCommand): Promise<Map<number, string | undefined>> {
  const claims = new Map<number, string | undefined>();
  const asked = new Set(pids);
  // one short line per pid: anything longer is not the reader's
  const out = await runAsTenantScript(asTenant, tenantReader, [ENVIRON_PREFIX_BYTES, `${SESSION_CLAIM_ENV}=`], pids.map(String), {
    maxChars: pids.length * 96,
    timeoutMs: AS_TENANT_TIMEOUT_MS,
  });
  for (const line of out.split("\n")) {
    const [pid, claim] = line.split(" ");
    if (asked.has(Number(pid))) claims.set(Number(pid), claim && CLAIM_SHAPE.test(claim) ? claim : undefined);
  }
  return claims;
}
