// Tenants apart on the network. A tenant's processes may listen only on a block of TCP ports of
// its own, and may connect to any port but the other tenants' blocks and the kernel's ephemeral
// range (where a socket that listens without binding lands, whoever owns it); the hub's own port
// stays open to them. Landlock (Linux 6.7+, allowed by Docker's default seccomp profile and
// capabilities) enforces it on every address at once, 127.x, ::1, ::ffff:127.0.0.1 and wildcard
// listeners alike, and scopes abstract UNIX sockets to the process tree they were made in (6.12+).
// The rules are set by ./landlock/agentbox-landlock.c before the uid switch, so no server of the
// tenant, nor anything it starts, ever runs outside them. The hub's own short helpers that run as
// the tenant (the sweeper's claim reader, a disk budget's prlimit) stay outside every domain: they
// must read and reach the processes of all the tenant's servers, and Landlock keeps a domain's
// processes from ptracing anything outside it, so no process of the tenant can take one over.
// UDP is not covered: Landlock has no UDP rules.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { distRoot } from "../config/config.js";
import { formatRange, type NetworkConfig, type PortRange } from "../config/network.js";
import { ConfigError } from "../config/schema.js";
import type { PortLocks } from "./port-locks.js";

export type { PortRange };

/** What GET / and hub_status say of the network between tenants. */
export interface NetworkReport {
  network: "isolated" | "shared";
  /** How it is kept apart, or why it is not. */
  networkSummary: string;
}

/** A tenant's share of the network, when its ports are confined. */
export interface TenantNetwork {
  /** The TCP ports its processes may listen on. */
  readonly ports: PortRange;
  /** The helper's command line (to put before setpriv) for a server of the tenant, which may also reach the hub's port. */
  confine(hubPort: number | undefined): string[];
}

export interface NetworkPlan extends NetworkReport {
  /** One warn line for the startup log when tenants can reach each other's sockets. */
  warning?: string;
  /** Each confined tenant's share, by name. */
  tenants: ReadonlyMap<string, TenantNetwork>;
  /**
   * A share for a tenant made while the hub runs (a person signing in): the next free block, or
   * undefined when the tenants' ports hold no more. Absent when tenants are not confined.
   */
  allot?(name: string): TenantNetwork | undefined;
  /** Give back the block of a tenant made while the hub runs (a person whose tenant idled away), for the next one. */
  release?(name: string): void;
}

/** The kernel's Landlock ABI as the helper sees it (0: none), or undefined when the helper is not built. */
export function landlockAbi(helper = landlockHelper()): number | undefined {
  if (!fs.existsSync(helper)) return undefined;
  const probe = spawnSync(helper, ["--abi"], { encoding: "utf8", timeout: 5000 });
  const abi = Number(probe.stdout?.trim());
  return probe.status === 0 && Number.isInteger(abi) ? abi : 0;
}

export const landlockHelper = () => path.join(distRoot(), "bin", "agentbox-landlock");

/** The ports the kernel hands out to sockets that bind port 0 or listen unbound. */
export function ephemeralPorts(): PortRange {
  try {
    const [low, high] = fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    if (low > 0 && high >= low && high <= 65535) return { low, high };
  } catch {
    // not Linux, or no /proc: Linux's default
  }
  return { low: 32768, high: 60999 };
}

interface TenantPorts {
  name: string;
  ports?: string;
}

const overlaps = (a: PortRange, b: PortRange) => a.low <= b.high && b.low <= a.high;
const within = (inner: PortRange, outer: PortRange) => inner.low >= outer.low && inner.high <= outer.high;

/** Takes a block for a tenant against the other hubs on the machine (./port-locks.ts): false when another holds part of it. */
export type ClaimBlock = (block: PortRange, tenant: string) => boolean;

/**
 * Each tenant's block: its own "ports" if it names some, else the next free block of
 * `portsPerTenant` in config order, all inside `region` (a block outside it would be open to every
 * other tenant) and none shared, with this hub's other tenants or, through `claim`, another hub's.
 */
export function assignPorts(
  tenants: readonly TenantPorts[],
  region: PortRange,
  perTenant: number,
  parse: (text: string, where: string) => PortRange,
  claim: ClaimBlock = () => true,
): Map<string, PortRange> {
  const blocks = new Map<string, PortRange>();
  for (const t of tenants) {
    if (!t.ports) continue;
    const block = parse(t.ports, `tenants.${t.name}.ports`);
    if (!within(block, region))
      throw new ConfigError(`tenants.${t.name}.ports (${formatRange(block)}) must lie within the tenants' ports ${formatRange(region)} (network.ports).`);
    const clash = [...blocks].find(([, other]) => overlaps(block, other));
    if (clash) throw new ConfigError(`tenants.${t.name}.ports (${formatRange(block)}) overlaps tenant '${clash[0]}' (${formatRange(clash[1])}).`);
    if (!claim(block, t.name))
      throw new ConfigError(
        `tenants.${t.name}.ports (${formatRange(block)}) overlap ports another agentbox hub on this machine gives one of its tenants: choose other ports, or stop that hub.`,
      );
    blocks.set(t.name, block);
  }
  for (const t of tenants) {
    if (blocks.has(t.name)) continue;
    const block = claimedBlock(blocks, region, perTenant, t.name, claim);
    if (!block) {
      // room there would be, but other hubs on the machine give it to their tenants
      const others = freeBlock(blocks, region, perTenant) ? " besides the blocks other agentbox hubs on this machine give their tenants" : "";
      throw new ConfigError(
        `${tenants.length} tenants need ${perTenant} ports each, more than the tenants' ports ${formatRange(region)} hold${others}: widen network.ports ` +
          "(AGENTBOX_TENANT_PORTS), give this hub ports of its own there, or lower network.portsPerTenant (AGENTBOX_PORTS_PER_TENANT).",
      );
    }
    blocks.set(t.name, block);
  }
  return blocks;
}

/** The lowest block of `perTenant` ports in `region` that overlaps none of `blocks` and that `claim` takes for `tenant`. */
function claimedBlock(blocks: ReadonlyMap<string, PortRange>, region: PortRange, perTenant: number, tenant: string, claim: ClaimBlock): PortRange | undefined {
  const passed = new Map(blocks);
  for (let block = freeBlock(passed, region, perTenant); block; block = freeBlock(passed, region, perTenant)) {
    if (claim(block, tenant)) return block;
    passed.set(`another hub's ${formatRange(block)}`, block);
  }
  return undefined;
}

/** The lowest block of `perTenant` ports in `region` that overlaps none of `blocks`. */
function freeBlock(blocks: ReadonlyMap<string, PortRange>, region: PortRange, perTenant: number): PortRange | undefined {
  let block = { low: region.low, high: region.low + perTenant - 1 };
  for (let clash = [...blocks.values()].find((b) => overlaps(b, block)); clash; clash = [...blocks.values()].find((b) => overlaps(b, block))) {
    block = { low: clash.high + 1, high: clash.high + perTenant };
  }
  return block.high <= region.high ? block : undefined;
}

/** Ports 1-65535 without `holes`, plus `extra`, as the helper's comma-separated ranges. */
export function portsWithout(holes: readonly PortRange[], extra: readonly PortRange[]): string {
  const sorted = [...holes].sort((a, b) => a.low - b.low);
  const open: PortRange[] = [];
  let from = 1;
  for (const hole of sorted) {
    if (hole.low > from) open.push({ low: from, high: hole.low - 1 });
    from = Math.max(from, hole.high + 1);
  }
  if (from <= 65535) open.push({ low: from, high: 65535 });
  return [...open, ...extra].map((r) => (r.low === r.high ? String(r.low) : formatRange(r))).join(",");
}

/** The ports of the OTLP collectors the tenants' built-in servers export their spans to, if any. */
export function collectorPorts(env: NodeJS.ProcessEnv): number[] {
  const ports = [env.OTEL_EXPORTER_OTLP_ENDPOINT, env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT].flatMap((endpoint) => {
    try {
      return endpoint?.trim() ? [Number(new URL(endpoint.trim()).port)] : [];
    } catch {
      return []; // the tracing set-up refuses it by name
    }
  });
  return ports.filter((port) => port > 0);
}

export interface PlanInput {
  network: NetworkConfig;
  tenants: readonly TenantPorts[];
  /** The port the hub is configured to listen on (0: any). */
  hubPort: number;
  /** Whether the hub runs tenants under uids of their own. */
  perTenantUids: boolean;
  /** Whether tenants are made while the hub runs (people signing in with OAuth): blocks are then allotted on demand. */
  tenantsJoin?: boolean;
  /** The blocks the other hubs on this machine hold (./port-locks.ts): none of them is given to a tenant here. */
  locks?: Pick<PortLocks, "claim" | "release">;
  /** Ports the operator's services listen on that every tenant's servers must reach (an OTLP collector). */
  reachable?: number[];
  parse: (text: string, where: string) => PortRange;
  abi?: () => number | undefined;
  ephemeral?: () => PortRange;
}

export function planNetwork(input: PlanInput): NetworkPlan {
  const none = new Map<string, TenantNetwork>();
  if ((input.tenants.length <= 1 && !input.tenantsJoin) || !input.perTenantUids) {
    return { network: "isolated", networkSummary: "one tenant: no other tenant's sockets to reach", tenants: none };
  }
  const shared = (why: string, todo: string): NetworkPlan => ({
    network: "shared",
    networkSummary: `tenants can connect to each other's listening sockets: ${why}`,
    warning: `network: tenants can connect to each other's listening sockets: ${why}. ${todo}`,
    tenants: none,
  });
  if (input.network.isolation === "off") return shared("network isolation is off (AGENTBOX_NETWORK_ISOLATION=off)", "Set it to auto to keep them apart.");
  const abi = (input.abi ?? landlockAbi)();
  if (abi === undefined) {
    return shared(
      `the Landlock helper ${landlockHelper()} is not built`,
      "Build agentbox with a C compiler present (npm run setup installs one), or run one container per tenant.",
    );
  }
  if (abi < 4) {
    return shared(
      abi === 0 ? "this kernel offers no Landlock" : `this kernel's Landlock (ABI ${abi}) has no network rules`,
      "Landlock TCP rules need Linux 6.7 or later with landlock in its LSM list (Docker's default seccomp profile allows it); otherwise run one container per tenant.",
    );
  }
  const ephemeral = (input.ephemeral ?? ephemeralPorts)();
  const region = input.network.ports ?? { low: ephemeral.high + 1, high: 65535 };
  if (overlaps(region, ephemeral)) {
    throw new ConfigError(
      `The tenants' ports ${formatRange(region)} overlap the kernel's ephemeral range ${formatRange(ephemeral)}, which any process may be given: ` +
        "choose other ports (network.ports, AGENTBOX_TENANT_PORTS).",
    );
  }
  if (region.high < region.low)
    throw new ConfigError(
      `The kernel's ephemeral range ${formatRange(ephemeral)} leaves no ports above it for tenants: set network.ports (AGENTBOX_TENANT_PORTS).`,
    );
  if (input.hubPort >= region.low && input.hubPort <= region.high)
    throw new ConfigError(`The hub's port ${input.hubPort} lies within the tenants' ports ${formatRange(region)}: choose another port for one of them.`);
  const blocks = assignPorts(input.tenants, region, input.network.portsPerTenant, input.parse, input.locks?.claim.bind(input.locks));
  const helper = landlockHelper();
  const tenants = new Map<string, TenantNetwork>();
  const scope = abi >= 6 ? ["--scope-abstract-unix"] : [];
  const shareOf = (ports: PortRange): TenantNetwork => ({
    ports,
    confine: (hubPort) => {
      const operator = [...(hubPort ? [hubPort] : []), ...(input.reachable ?? [])].map((port) => ({ low: port, high: port }));
      const reach = portsWithout([ephemeral, region], [ports, ...operator]);
      return [helper, "--bind", formatRange(ports), "--connect", reach, ...scope, "--"];
    },
  });
  for (const [name, ports] of blocks) tenants.set(name, shareOf(ports));
  const allot = (name: string) => {
    const block = claimedBlock(blocks, region, input.network.portsPerTenant, name, input.locks ? input.locks.claim.bind(input.locks) : () => true);
    if (!block) return undefined;
    blocks.set(name, block);
    const share = shareOf(block);
    tenants.set(name, share);
    return share;
  };
  const release = (name: string) => {
    const block = blocks.get(name);
    if (block) input.locks?.release(block);
    blocks.delete(name);
    tenants.delete(name);
  };
  const how =
    `Landlock (ABI ${abi}): each tenant's processes listen only on TCP ports of its own (${input.network.portsPerTenant} each, from ${formatRange(region)}) ` +
    `and cannot connect to another tenant's ports or the ephemeral range ${formatRange(ephemeral)}, on any address`;
  if (abi < 6) {
    return {
      network: "shared",
      networkSummary: `${how}; abstract UNIX sockets are shared (scoping them needs Landlock ABI 6, Linux 6.12)`,
      warning: `network: tenants can connect to each other's abstract UNIX sockets: this kernel's Landlock is ABI ${abi}, scoping needs ABI 6 (Linux 6.12). TCP ports are kept apart.`,
      tenants,
      allot,
      release,
    };
  }
  return {
    network: "isolated",
    networkSummary: `${how}; abstract UNIX sockets reach only their own server's processes; UDP is not separated`,
    tenants,
    allot,
    release,
  };
}
