// Prometheus metrics for GET /metrics.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

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
  readonly sessionsOpened = new Counter({
    name: "agentbox_sessions_opened_total",
    help: "Client sessions opened, by transport",
    labelNames: ["transport"],
    registers: [this.registry],
  });
  readonly sessionsActive = new Gauge({
    name: "agentbox_sessions_active",
    help: "Client sessions open now, by transport",
    labelNames: ["transport"],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "agentbox_hub_" });
  }

  /** Which replica this is (AGENTBOX_REPLICA) and whether it is draining, for per-replica dashboards. */
  describeReplica(replica: string | undefined, draining: () => boolean): void {
    if (replica) {
      new Gauge({ name: "agentbox_replica_info", help: "This hub's replica name (AGENTBOX_REPLICA); always 1", labelNames: ["replica"], registers: [this.registry] }).set({ replica }, 1);
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

  async render(): Promise<string> {
    return this.registry.metrics();
  }
}
