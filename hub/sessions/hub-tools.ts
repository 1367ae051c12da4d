// Tools the hub serves itself (prefix hub_): its own status and metrics, and the calling client's
// session — what it holds in every child, and a way to end it and free all of that.
import fs from "node:fs";
import os from "node:os";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { DESCRIBE_SESSION_METHOD } from "../../servers/lib/session-events.js";
import type { SessionServices } from "./services.js";
import { listProcessesAsync, treeUsage } from "../../servers/lib/proctree.js";
import type { LocalTools } from "./tool-calls.js";
import type { ClientSession } from "./registry.js";

const noInput = { type: "object" as const, properties: {} };
const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

const TOOLS: Tool[] = [
  {
    name: "hub_status",
    title: "Hub status",
    description: "agentbox's servers with their state, pid, restarts and tool counts, plus uptime and version.",
    inputSchema: noInput,
    annotations: readOnly,
  },
  {
    name: "hub_metrics",
    title: "Resource use",
    description:
      "Your sessions and tool calls (ok, errors, rate-limited), the memory and CPU of each of your server processes (with everything it started), your workspace's free disk, and the container's capacity.",
    inputSchema: noInput,
    annotations: readOnly,
  },
  {
    name: "hub_sessions",
    title: "Your session",
    description: "Your own client session: its age and idle time, and what each server holds for it, as the server reports it.",
    inputSchema: noInput,
    annotations: readOnly,
  },
  {
    name: "hub_end_session",
    title: "End your session",
    description: "End your client session now: every server frees what it held for it. Reconnect to start a new one.",
    inputSchema: noInput,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  },
];

const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

function readNumber(file: string): number | undefined {
  try {
    const value = fs.readFileSync(file, "utf8").trim();
    return value === "max" ? undefined : Number(value);
  } catch {
    return undefined;
  }
}

function containerUsage() {
  const cpuStat = (() => {
    try {
      const line = fs.readFileSync("/sys/fs/cgroup/cpu.stat", "utf8").match(/usage_usec (\d+)/);
      return line ? Number(line[1]) / 1e6 : undefined;
    } catch {
      return undefined;
    }
  })();
  return {
    cpus: os.availableParallelism(),
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
    cgroupCpuSeconds: cpuStat,
    memoryMiB: { total: mib(os.totalmem()), free: mib(os.freemem()), cgroupUsed: mibOrNull(readNumber("/sys/fs/cgroup/memory.current")), cgroupLimit: mibOrNull(readNumber("/sys/fs/cgroup/memory.max")) },
  };
}

/** What the container has, not what it uses. */
function containerCapacity() {
  return { cpus: os.availableParallelism(), memoryMiB: { total: mib(os.totalmem()), cgroupLimit: mibOrNull(readNumber("/sys/fs/cgroup/memory.max")) } };
}

function mibOrNull(bytes: number | undefined): number | null {
  return bytes === undefined ? null : mib(bytes);
}

function diskUsage(path: string) {
  try {
    const s = fs.statfsSync(path);
    return { path, totalMiB: mib(s.blocks * s.bsize), freeMiB: mib(s.bavail * s.bsize) };
  } catch (err) {
    return { path, error: (err as Error).message };
  }
}

function result(text: string, data: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: data };
}

export function hubTools(hub: SessionServices): LocalTools {
  const handlers: Record<string, (session: ClientSession) => Promise<CallToolResult>> = {
    async hub_status(session) {
      const status = hub.status(session.tenant);
      const lines = status.servers.map(
        (s) => `${s.name.padEnd(12)} ${s.state.padEnd(10)} pid ${s.pid ?? "-"}  tools ${s.tools}  restarts ${s.restarts}${"lastError" in s ? `\n  why: ${s.lastError}` : ""}`,
      );
      return result(`agentbox ${status.version}, up ${status.uptimeSeconds} s, ${status.sessions} sessions, workspace ${status.workspace}\nisolation: ${status.isolation.mode} (${status.isolation.summary})\n${lines.join("\n")}`, status);
    },
    async hub_metrics(session) {
      // one read of the process table, off the event loop: a tenant may run thousands of processes
      const procs = await listProcessesAsync();
      const servers = session.tenant.children.map((c) => {
        const usage = c.pid ? treeUsage(c.pid, procs) : undefined;
        return { name: c.name, state: c.state, pid: c.pid ?? null, processes: usage?.processes ?? 0, rssMiB: mib(usage?.rssBytes ?? 0), cpuSeconds: usage?.cpuSeconds ?? 0 };
      });
      const { tenant } = session;
      const figures = { sessions: hub.sessions.all().filter((s) => s.tenant === tenant).length, calls: hub.metrics.tenantCalls(tenant.name) };
      // the hub and the container are shared by every tenant: their use says what the others do
      // (hub-wide figures are on /metrics, for the operator); a tenant alone sees them
      const shared = hub.tenants.length > 1;
      const cpu = process.cpuUsage();
      const data = {
        container: shared ? containerCapacity() : containerUsage(),
        disk: diskUsage(tenant.workspace),
        ...(shared ? {} : { hub: { pid: process.pid, rssMiB: mib(process.memoryUsage().rss), cpuSeconds: (cpu.user + cpu.system) / 1e6, sessions: figures.sessions } }),
        ...figures,
        servers,
      };
      const lines = servers.map((s) => `${s.name.padEnd(12)} ${String(s.rssMiB).padStart(7)} MiB  ${s.cpuSeconds.toFixed(1)} s CPU  ${s.processes} processes`);
      const { calls } = figures;
      const head = `${figures.sessions} sessions, ${calls.total} tool calls (${calls.ok} ok, ${calls.tool_error} tool errors, ${calls.error} failed, ${calls.rate_limited} rate-limited)`;
      const hubLine = data.hub ? `hub ${data.hub.rssMiB} MiB; ` : "";
      return result(`${head}\n${hubLine}workspace disk free ${"freeMiB" in data.disk ? data.disk.freeMiB : "?"} MiB\n${lines.join("\n")}`, data);
    },
    async hub_sessions(session) {
      const held: Record<string, unknown> = {};
      await Promise.all(
        session.tenant.children
          .filter((c) => c.state === "ready") // an idle child holds nothing for anyone
          .map(async (child) => {
            try {
              const reply = (await child.request(DESCRIBE_SESSION_METHOD, { session: session.id })) as { state?: Record<string, unknown> };
              if (reply.state && Object.keys(reply.state).length) held[child.name] = reply.state;
            } catch {
              // a third-party server does not know this request; it holds nothing we can show
            }
          }),
      );
      const data = {
        id: session.id,
        transport: session.kind,
        ageSeconds: Math.round((Date.now() - session.createdAt) / 1000),
        idleSeconds: Math.round((Date.now() - session.lastActivity) / 1000),
        callsInFlight: session.inflight.size,
        held,
      };
      return result(`session ${data.id} (${data.transport}), ${data.ageSeconds} s old\n${JSON.stringify(held, null, 2)}`, data);
    },
    async hub_end_session(session) {
      // answer first, then close: closing the session closes the stream the answer travels on
      setTimeout(() => void hub.sessions.close(session.id), 50);
      return result(`Session ${session.id} ends now; every server frees what it held for it.`, { ended: session.id });
    },
  };
  return {
    list: () => TOOLS,
    call: (name, _args, session) => handlers[name]?.(session),
  };
}
