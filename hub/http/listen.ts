// The hub owns its port on every address its clients may reach it by. A hub bound to 127.0.0.1
// alone leaves [::1]:<port> free: a tenant's process could listen there and collect the API keys
// of every client whose resolver prefers ::1 for "localhost". So a loopback hub also binds the
// other loopback address, and a hub bound to every IPv4 interface also binds every IPv6 one (and
// the reverse), where the machine has them. Before binding, a port a tenant's process holds is
// refused by name, uid and pid.
import fs from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { getRequestListener } from "@hono/node-server";
import { listeningSockets } from "../previews/listening-sockets.js";

export interface BindAddress {
  host: string;
  /** An IPv6 socket that leaves IPv4 alone (the IPv4 twin is bound separately). */
  ipv6Only?: boolean;
}

export interface Listening {
  port: number;
  /** Every address bound, the configured one first. */
  addresses: string[];
  close(): void;
}

/** The addresses to bind for a configured host: itself, and its twin in the other IP family. */
export function bindAddresses(host: string, dualStack = v6BindsV4()): { main: BindAddress; twins: BindAddress[] } {
  switch (host) {
    case "localhost":
    case "127.0.0.1":
      return { main: { host: "127.0.0.1" }, twins: [{ host: "::1" }] };
    case "::1":
      return { main: { host: "::1" }, twins: [{ host: "127.0.0.1" }] };
    case "0.0.0.0":
      return { main: { host: "0.0.0.0" }, twins: [{ host: "::", ipv6Only: true }] };
    case "::":
      // a dual-stack socket already takes IPv4 (net.ipv6.bindv6only=0, Linux's default)
      return { main: { host: "::" }, twins: dualStack ? [] : [{ host: "0.0.0.0" }] };
    default:
      return { main: { host }, twins: [] };
  }
}

function v6BindsV4(): boolean {
  try {
    return fs.readFileSync("/proc/sys/net/ipv6/bindv6only", "utf8").trim() === "0";
  } catch {
    return true;
  }
}

// the twin's family is missing on this machine (no IPv6, or no IPv4 loopback): nothing to take there
const FAMILY_MISSING = new Set(["EADDRNOTAVAIL", "EAFNOSUPPORT", "EPROTONOSUPPORT"]);
const PORT_RETRIES = 5;

function bind(server: Server, address: BindAddress, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once("error", onError);
    server.listen({ host: address.host, port, ipv6Only: address.ipv6Only }, () => {
      server.off("error", onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** What takes a connection's upgrade (a preview's WebSocket); without one, upgrades are closed. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

// An idle connection stays open longer than a router keeps its pooled ones (nginx's upstream
// keepalive_timeout is 60 s): were the hub first to close one, a POST the router sent on it in that
// instant would fail as a 502, and nginx does not retry a POST. Node's 5 s default races every client.
const KEEP_ALIVE_MS = 65_000;

/** Serve `fetch` on the host and its twins, on one port; port 0 picks one free on all of them. */
export async function listenEverywhere(
  fetch: (request: Request) => Response | Promise<Response>,
  host: string,
  port: number,
  onUpgrade: UpgradeHandler = (_req, socket) => socket.destroy(),
): Promise<Listening> {
  const { main, twins } = bindAddresses(host);
  const requests = getRequestListener(fetch, { hostname: host });
  const createServer = () => {
    // Hono's listener answers every fault of the app itself (a 500, or the connection ended): its promise never rejects
    const server = createHttpServer((req, res) => void requests(req, res)).on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      // Node takes its own error listener off a socket it hands over for an upgrade: without one,
      // a client that resets the connection (anyone holding a preview URL) would end the hub
      socket.on("error", () => socket.destroy());
      onUpgrade(req, socket, head);
    });
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    return server;
  };
  for (let attempt = 0; ; attempt++) {
    const servers: Server[] = [];
    const close = () => servers.forEach((s) => s.close());
    try {
      const first = createServer();
      servers.push(first);
      const bound = await bind(first, main, port);
      const addresses = [main.host];
      for (const twin of twins) {
        const server = createServer();
        try {
          await bind(server, twin, bound);
          servers.push(server);
          addresses.push(twin.host);
        } catch (err) {
          if (!FAMILY_MISSING.has((err as NodeJS.ErrnoException).code ?? "")) throw Object.assign(err as Error, { address: twin.host, port: bound });
        }
      }
      return { port: bound, addresses, close };
    } catch (err) {
      close();
      // a free port picked on one address may be taken on the other: pick again
      if (port === 0 && (err as NodeJS.ErrnoException).code === "EADDRINUSE" && attempt < PORT_RETRIES) continue;
      throw err;
    }
  }
}

export interface PortHolder {
  address: string;
  uid: number;
  pids: number[];
}

/** Who listens on a TCP port (any address), from /proc/net/tcp and tcp6: uid, and pids where they can be found. */
export function portHolders(port: number): PortHolder[] {
  const sockets = listeningSockets(port);
  if (sockets.length === 0) return [];
  const pidsOf = socketPids(new Set(sockets.map((s) => s.inode)));
  return sockets.map((s) => ({ address: s.family === 6 ? `[${s.address}]` : s.address, uid: s.uid, pids: pidsOf.get(s.inode) ?? [] }));
}

function socketPids(inodes: Set<string>): Map<string, number[]> {
  const found = new Map<string, number[]>();
  for (const pid of fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      const inode = /^socket:\[(\d+)\]$/.exec(safeReadlink(`/proc/${pid}/fd/${fd}`))?.[1];
      if (inode && inodes.has(inode)) found.set(inode, [...(found.get(inode) ?? []), Number(pid)]);
    }
  }
  return found;
}

function safeReadlink(file: string): string {
  try {
    return fs.readlinkSync(file);
  } catch {
    return "";
  }
}

/**
 * Who listens on the port, in words ("" when nobody): every holder, or with `tenantsOnly` the
 * tenants' processes only (the hub refuses a port one of them holds).
 */
export function describeHolders(port: number, tenantUids: Map<number, string>, tenantsOnly = false): string {
  if (port === 0) return "";
  return portHolders(port)
    .filter((h) => !tenantsOnly || tenantUids.has(h.uid))
    .map((h) => {
      const who = tenantUids.has(h.uid) ? `tenant '${tenantUids.get(h.uid)}' (uid ${h.uid})` : `uid ${h.uid}`;
      return `${h.address}:${port} is held by ${who}${h.pids.length ? ` pid ${h.pids.join(", ")}` : ""}`;
    })
    .join("; ");
}
