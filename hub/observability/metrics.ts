// Prometheus metrics for GET /metrics (hub-wide, for the operator), and each tenant's own call
// figures for its hub_metrics (a tenant never sees another's).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export type CallOutcome = "ok" | "tool_error" | "error" | "rate_limited";
const OUTCOMES: readonly CallOutcome[] = ["ok", "tool_error", "error", "rate_limited"];

/** One tenant's tool calls through the hub since it started, by outcome. */
export type TenantCalls = { total: number } & Record<CallOutcome, number>;

const NO_CALLS: Readonly<TenantCalls> = { total: 0, ok: 0, tool_error: 0, error: 0, rate_limited: 0 };

/** The label of the tenants past the cap, summed (a leading "_": no configured tenant name collides with it by accident). */
export const OTHER_TENANTS = "_other";

/** A session as the gauges count it. */
export interface CountedSession {
  kind: string;
  idleMs: number;
  tenant: { name: string };
}

/**
 * Which tenants have series of their own: the first `cap` to be seen keep their label for the
 * hub's life, every later one is counted as OTHER_TENANTS. Fixed once given, so each series only
 * ever grows (rate() stays right), and a hub with ten thousand tenants costs a scrape cap + 1 series.
 */
class TenantLabels {
  private readonly named = new Set<string>();
  cap = 50;

  of(tenant: string): string {
    if (this.named.has(tenant)) return tenant;
    if (this.named.size >= this.cap) return OTHER_TENANTS;
    this.named.add(tenant);
    return tenant;
  }
}

export class HubMetrics {
  readonly registry = new Registry();
  readonly toolCalls = new Counter({
    name: "agentbox_tool_calls_total",
    help: "Tool calls by tool and outcome (ok, tool_error, error, rate_limited)",
    labelNames: ["tool", "outcome"],
    registers: [this.registry],
  });
  readonly toolLatency = new Histogram({
    name: "agentbox_tool_call_duration_seconds",
    help: "Tool call latency through the hub",
    labelNames: ["tool"],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: "agentbox_rate_limit_hits_total",
    help: "Requests refused by a rate limit, by kind (method or tool) and name",
    labelNames: ["kind", "name"],
    registers: [this.registry],
  });
  readonly childRestarts = new Counter({
    name: "agentbox_child_restarts_total",
    help: "Restarts of child servers after they exited",
    labelNames: ["server"],
    registers: [this.registry],
  });
  readonly modernToolCalls = new Counter({
    name: "agentbox_modern_tool_calls_total",
    help: "2026-07-28 tools/call requests by who answered them: the hub's direct path, or the SDK (anything but a plain call and its plain result)",
    labelNames: ["answered_by"],
    registers: [this.registry],
  });
  readonly bookkeepingCalls = new Counter({
    name: "agentbox_bookkeeping_calls_total",
    help: "Calls of the hub's read-only tools a client marked as its bookkeeping (the playground's side panels), counted here instead of written to the audit trail",
    labelNames: ["tool"],
    registers: [this.registry],
  });
  readonly sessionsOpened = new Counter({
    name: "agentbox_sessions_opened_total",
    help: "Client sessions opened, by transport",
    labelNames: ["transport"],
    registers: [this.registry],
  });
  /** Sessions by transport, counted at each scrape: active (a call in flight or used lately) or idle. */
  private sessionsSource: () => CountedSession[] = () => [];
  private idleAfterMs = 60_000;
  readonly sessionsActive = this.sessionGauge(
    "agentbox_sessions_active",
    "Client sessions in use now (a call in flight, or a request in the last minute), by transport",
    false,
  );
  readonly sessionsIdle = this.sessionGauge(
    "agentbox_sessions_idle",
    "Client sessions open but unused for a minute or more, by transport (one-shot clients that never close linger here until the idle timeout)",
    true,
  );

  private readonly callsByTenant = new Map<string, TenantCalls>();
  private readonly tenantLabels = new TenantLabels();

  constructor() {
    // the event loop's delay sampled every 100 ms, not prom-client's 10: at 10 an idle hub woke a
    // hundred times a second for it alone (0.75% of a core)
    collectDefaultMetrics({ register: this.registry, prefix: "agentbox_hub_", eventLoopMonitoringPrecision: 100 });
    const calls = () => this.callsByTenant;
    const sessions = () => this.sessionsSource();
    const label = (tenant: string) => this.tenantLabels.of(tenant);
    new Counter({
      name: "agentbox_tenant_tool_calls_total",
      help: `Tool calls by tenant and outcome; past AGENTBOX_METRICS_TENANTS tenants the rest are summed as tenant="${OTHER_TENANTS}"`,
      labelNames: ["tenant", "outcome"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [tenant, counts] of calls()) {
          for (const outcome of OUTCOMES) if (counts[outcome]) this.inc({ tenant: label(tenant), outcome }, counts[outcome]);
        }
      },
    });
    new Gauge({
      name: "agentbox_tenant_sessions",
      help: `Open sessions and 2026 contexts by tenant (capped like agentbox_tenant_tool_calls_total)`,
      labelNames: ["tenant"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const s of sessions()) this.inc({ tenant: label(s.tenant.name) });
      },
    });
  }

  /** How many tenants get series of their own on /metrics (AGENTBOX_METRICS_TENANTS). */
  capTenantLabels(cap: number): void {
    this.tenantLabels.cap = cap;
  }

  /** Counts a tool call's outcome hub-wide (by tool) and for the tenant that made it. */
  countCall(tenant: string, tool: string, outcome: CallOutcome): void {
    this.toolCalls.inc({ tool, outcome });
    this.tenantLabels.of(tenant);
    const calls = this.callsByTenant.get(tenant) ?? { ...NO_CALLS };
    calls.total++;
    calls[outcome]++;
    this.callsByTenant.set(tenant, calls);
  }

  /** One tenant's own call figures (a copy). */
  tenantCalls(tenant: string): TenantCalls {
    return { ...(this.callsByTenant.get(tenant) ?? NO_CALLS) };
  }

  /** Which replica this is (AGENTBOX_REPLICA) and whether it is draining, for per-replica dashboards. */
  describeReplica(replica: string | undefined, draining: () => boolean): void {
    if (replica) {
      new Gauge({
        name: "agentbox_replica_info",
        help: "This hub's replica name (AGENTBOX_REPLICA); always 1",
        labelNames: ["replica"],
        registers: [this.registry],
      }).set({ replica }, 1);
    }
    new Gauge({
      name: "agentbox_draining",
      help: "1 while the hub drains after SIGTERM (no new sessions, calls in flight finishing), else 0",
      registers: [this.registry],
      collect() {
        this.set(draining() ? 1 : 0);
      },
    });
  }

  /** Where the session gauges read from, once the hub has its sessions. */
  countSessions(source: () => CountedSession[], idleAfterMs: number): void {
    this.sessionsSource = source;
    this.idleAfterMs = idleAfterMs;
  }

  private sessionGauge(name: string, help: string, idle: boolean): Gauge {
    // collect() runs with the gauge as `this`; these read the hub's figures at that moment
    const sessions = () => this.sessionsSource();
    const idleAfterMs = () => this.idleAfterMs;
    return new Gauge({
      name,
      help,
      labelNames: ["transport"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const s of sessions()) if (s.idleMs >= idleAfterMs() === idle) this.inc({ transport: s.kind });
      },
    });
  }

  async render(): Promise<string> {
    return this.registry.metrics();
  }
}
