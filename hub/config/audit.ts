// Where the audit trail goes (AGENTBOX_AUDIT_LOG) and whether it holds arguments
// (AGENTBOX_AUDIT_ARGUMENTS), and how many tenants /metrics names (AGENTBOX_METRICS_TENANTS), read
// from the environment with a message naming what is allowed.
import path from "node:path";
import { ConfigError } from "./schema.js";
import { positiveInt } from "./env.js";

export interface AuditConfig {
  /** "stdout" (stderr under --stdio, where stdout carries JSON-RPC), "stderr", a file path, or off. */
  log: "stdout" | "stderr" | "off" | { file: string };
  /** Whether call records hold the call's arguments (secret-looking fields redacted). */
  arguments: boolean;
  /** Bytes a slow destination may have queued before lines are dropped and counted (AGENTBOX_AUDIT_QUEUE_BYTES). */
  queueBytes: number;
  /** How many tenants get series of their own on /metrics; the rest are summed as tenant="other" (AGENTBOX_METRICS_TENANTS). */
  metricsTenants: number;
}

const ON = ["1", "true", "on", "yes"];
const OFF = ["0", "false", "off", "no", ""];

export function auditConfigFromEnv(env: NodeJS.ProcessEnv): AuditConfig {
  return {
    log: auditLog(env.AGENTBOX_AUDIT_LOG),
    arguments: flag(env.AGENTBOX_AUDIT_ARGUMENTS),
    queueBytes: positiveInt(env.AGENTBOX_AUDIT_QUEUE_BYTES, "AGENTBOX_AUDIT_QUEUE_BYTES") ?? 1024 * 1024,
    // each named tenant is a handful of series per scrape: a bound a Prometheus server holds easily
    metricsTenants: positiveInt(env.AGENTBOX_METRICS_TENANTS, "AGENTBOX_METRICS_TENANTS") ?? 50,
  };
}

// stdout by default: a container's stdout is what `docker logs` and Kubernetes collect, with no volume
// to mount or file to rotate, so the trail exists from the first run; a file or "off" is one setting away
function auditLog(value: string | undefined): AuditConfig["log"] {
  const v = (value ?? "").trim();
  if (v === "" || v.toLowerCase() === "stdout") return "stdout";
  if (v.toLowerCase() === "off" || v.toLowerCase() === "stderr") return v.toLowerCase() as "off" | "stderr";
  if (!path.isAbsolute(v)) throw new ConfigError(`AGENTBOX_AUDIT_LOG must be "stdout", "stderr", "off" or an absolute file path, got "${v}"`);
  return { file: v };
}

function flag(value: string | undefined): boolean {
  const v = (value ?? "").trim().toLowerCase();
  if (ON.includes(v)) return true;
  if (OFF.includes(v)) return false;
  throw new ConfigError(`AGENTBOX_AUDIT_ARGUMENTS must be 1 (records hold arguments, secret-looking fields redacted) or 0, got "${value}"`);
}
