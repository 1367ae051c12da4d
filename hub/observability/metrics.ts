// Prometheus metrics for GET /metrics (hub-wide, for the operator), and each tenant's own call
// figures for its hub_metrics (a tenant never sees another's).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export type CallOutcome = "ok" | "tool_error" | "error" | "rate_limited";

/** One tenant's tool calls through the hub since it started, by outcome. */
export type TenantCalls = { total: number } & Record<CallOutcome, number>;

const NO_CALLS: Readonly<TenantCalls> = { total: 0, ok: 0, tool_error: 0, error: 0, rate_limited: 0 };

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
  readonly sessionsOpened = new Counter({
    name: "agentbox_sessions_opened_total",
    help: "Client sessions opened, by transport",
    labelNames: ["transport"],
    registers: [this.registry],
  });
  /** Sessions by transport, counted at each scrape: active (a call in flight or used lately) or idle. */
  private sessionsSource: () => Array<{ kind: string; idleMs: number }> = () => [];
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

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "agentbox_hub_" });
  }

  /** Counts a tool call's outcome hub-wide (by tool) and for the tenant that made it. */
  countCall(tenant: string, tool: string, outcome: CallOutcome): void {
    this.toolCalls.inc({ tool, outcome });
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
  countSessions(source: () => Array<{ kind: string; idleMs: number }>, idleAfterMs: number): void {
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
