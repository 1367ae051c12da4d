// A tenant's own TCP ports, for tests whose apps a tenant serves: in a hub with several tenants
// each may listen only on its block (hub/tenants/network.ts), which GET / names for its key.
import net from "node:net";
import type { TestHub } from "./hub.js";

export interface PortRange {
  low: number;
  high: number;
}

/** The block of the tenant whose API key this is (GET / with the key). */
export async function portsOf(hub: TestHub, key: string): Promise<PortRange> {
  const status = await (await fetch(`${hub.origin}/`, { headers: { Authorization: `Bearer ${key}` } })).json();
  const ports = /^(\d+)-(\d+)$/.exec(status.isolation?.ports ?? "");
  if (!ports) throw new Error(`the hub names no ports for this tenant: ${JSON.stringify(status.isolation)}`);
  return { low: Number(ports[1]), high: Number(ports[2]) };
}

/** Whether nothing listens on the port on any address (a dual-stack wildcard bind clashes with every one). */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once("error", () => resolve(false));
    probe.listen({ port, host: "::", ipv6Only: false }, () => probe.close(() => resolve(true)));
  });
}

/**
 * `count` ports of the range nothing listens on now, picked at random (an app an earlier test of the
 * file left running may still hold one).
 */
export async function freePortIn(range: PortRange, count: number): Promise<number[]> {
  const candidates = Array.from({ length: range.high - range.low + 1 }, (_, i) => range.low + i).sort(() => Math.random() - 0.5);
  const free: number[] = [];
  for (const port of candidates) {
    if (free.length === count) break;
    if (await isFree(port)) free.push(port);
  }
  if (free.length < count) throw new Error(`only ${free.length} of ${count} free ports in ${range.low}-${range.high}`);
  return free;
}

/**
 * Listen on a free port below the kernel's ephemeral range and outside every tenant's block: a
 * service of the test's own (a site, a collector) that tenants of a hub with several tenants must
 * reach, as they reach any such port on a real machine. Port 0 would land in the ephemeral range,
 * which tenants' processes may not connect to.
 */
export async function listenForTenants(server: net.Server, host = "127.0.0.1"): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const listening = await new Promise<boolean>((resolve) => {
      const onError = () => resolve(false);
      server.once("error", onError);
      server.listen(port, host, () => {
        server.off("error", onError);
        resolve(true);
      });
    });
    if (listening) return port;
  }
  throw new Error("no free port between 20000 and 30000");
}
