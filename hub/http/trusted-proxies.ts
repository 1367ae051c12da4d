// Which address a request comes from when the hub sits behind proxies it trusts. Built once per
// hub from its config and passed to what needs it, so two hubs in one process never share it.
import type { IncomingMessage } from "node:http";
import { BlockList, isIP } from "node:net";
import type { Forwarding } from "../previews/headers.js";

const familyOf = (address: string) => (isIP(address) === 6 ? "ipv6" : "ipv4");

/**
 * Proxies (AGENTBOX_TRUSTED_PROXIES: addresses or CIDR ranges, such as the router) whose
 * X-Forwarded-For names the real client: without this every client behind them is one address.
 */
export class TrustedProxies {
  private readonly list: BlockList | undefined;

  constructor(entries: readonly string[]) {
    if (entries.length === 0) return;
    this.list = new BlockList();
    for (const entry of entries) {
      const [address, prefix] = entry.split("/");
      if (prefix !== undefined) this.list.addSubnet(address, Number(prefix), familyOf(address));
      else this.list.addAddress(address, familyOf(address));
    }
  }

  /** Whether a peer is one of the proxies whose X-Forwarded-* headers are believed. */
  trusts(address: string): boolean {
    const plain = address.replace(/^::ffff:/, "");
    if (isIP(plain) === 0) return false;
    return Boolean(this.list?.check(plain, familyOf(plain)));
  }

  /** The client of a request that reached the hub from `peer` carrying this X-Forwarded-For. */
  clientAddress(peer: string, forwardedFor: string | undefined): string {
    if (!this.trusts(peer)) return peer;
    // the nearest hop that is not one of our proxies is the client
    const hops = (forwardedFor ?? "")
      .split(",")
      .map((h) => h.trim())
      .filter((h) => isIP(h));
    while (hops.length && this.trusts(hops[hops.length - 1])) hops.pop();
    return hops.pop() ?? peer;
  }
}

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)?.split(",")[0]?.trim() || undefined;

/** How a browser or client reached the hub: its own Host and scheme, or a trusted proxy's X-Forwarded-* for them. */
export function forwardingOf(req: IncomingMessage, proxies: TrustedProxies): Omit<Forwarding, "prefix"> {
  const peer = req.socket.remoteAddress ?? "unknown";
  const trusted = proxies.trusts(peer);
  const proto = (trusted && first(req.headers["x-forwarded-proto"])) || ("encrypted" in req.socket && req.socket.encrypted ? "https" : "http");
  const host = (trusted && first(req.headers["x-forwarded-host"])) || req.headers.host || "";
  return { proto: proto === "https" ? "https" : "http", host, for: proxies.clientAddress(peer, first(req.headers["x-forwarded-for"])) };
}

/** The base URL (`http://host:port`) a request reached the hub by, for the links the hub makes while answering it; none without a Host. */
export function requestBaseOf(req: IncomingMessage, proxies: TrustedProxies): string | undefined {
  const via = forwardingOf(req, proxies);
  return via.host ? `${via.proto}://${via.host}` : undefined;
}
