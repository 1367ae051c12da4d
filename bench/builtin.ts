// The built-in servers as they stand in this build: a server whose main.js is missing, or that
// fails to start, is reported as such and left out, so one broken server never stops the bench.
import fs from "node:fs";
import path from "node:path";
import { BUILTIN_SERVERS, builtinServers, bundled, distRoot, type ServerConfig } from "../hub/config/config.js";
import { hubStatus, startHub, waitHubReady, type HttpTarget } from "./targets.js";

export interface BuiltinSet {
  present: string[];
  /** name → why it is not part of the measurement */
  missing: Record<string, string>;
}

export function presentBuiltins(): BuiltinSet {
  const present: string[] = [];
  const missing: Record<string, string> = {};
  for (const name of BUILTIN_SERVERS) {
    const main = bundled(`servers/${name}`);
    if (fs.existsSync(main)) present.push(name);
    else missing[name] = `not built (${path.relative(distRoot(), main)} missing)`;
  }
  return { present, missing };
}

export function serversConfig(names: string[]): Record<string, ServerConfig> {
  return builtinServers(names);
}

/**
 * A hub with every built-in server that comes up. Servers that fail or do not get ready within
 * the timeout are recorded in `missing` and the hub is restarted without them.
 */
export async function startBuiltinHub(
  options: { workspace?: string; readyTimeoutMs?: number; nodeArgs?: string[] } = {},
): Promise<{ hub: HttpTarget; servers: string[]; missing: Record<string, string> }> {
  const { present, missing } = presentBuiltins();
  let servers = present;
  for (let attempt = 0; attempt < 2; attempt++) {
    const hub = await startHub({ servers: serversConfig(servers), workspace: options.workspace, nodeArgs: options.nodeArgs });
    if (await waitHubReady(hub.origin, options.readyTimeoutMs ?? 30_000, 50)) return { hub, servers, missing };
    const status = await hubStatus(hub.origin).catch(() => undefined);
    const failing = (status?.servers ?? []).filter((s) => s.state !== "ready");
    await hub.stop();
    if (!failing.length) throw new Error("hub never became ready and reports no failing server");
    for (const s of failing) missing[s.name] = `did not become ready: ${s.state}${s.lastError ? ` (${s.lastError})` : ""}`;
    servers = servers.filter((n) => !failing.some((f) => f.name === n));
  }
  throw new Error(`hub not ready even without ${Object.keys(missing).join(", ")}`);
}
