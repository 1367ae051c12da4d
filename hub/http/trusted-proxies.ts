// Which address a request comes from when the hub sits behind proxies it trusts. Built once per
// hub from its config and passed to what needs it, so two hubs in one process never share it.
import { BlockList, isIP } from "node:net";

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
