// Tools the hub serves itself (prefix hub_): its own status and metrics, and the calling client's
// session — what it holds in every child, and a way to end it and free all of that. Defined with
// the same helper as every server's tools (servers/lib/tool.ts): checked arguments, all four
// annotation hints, and an output schema for what each returns as structuredContent.
import fs from "node:fs";
import os from "node:os";
import { z } from "zod";
import { listProcessesAsync, treeUsage } from "../../servers/lib/proc-table.js";
import { DESCRIBE_SESSION_METHOD } from "../../servers/lib/session-events.js";
import { assertOffsetInRange, pageFooter, pageOfItems, pagingInput } from "../../servers/lib/paging.js";
import { defineTool, listedTool, reply, type Tool } from "../../servers/lib/tool.js";
import { hubStatusShape } from "../observability/hub-status.js";
import type { SessionServices } from "../sessions/services.js";
import { SESSION_KINDS } from "../sessions/registry.js";
import { describeSession, eraFields, sessionLine, sessionListOutput, tenantSessions } from "./session-list.js";
import type { HubToolCall, HubTools } from "../sessions/tool-calls.js";
import { hubNewContext, offerContext } from "./context-tool.js";
import { hubCalls } from "./calls-tool.js";
import { describeTask, hubCancelTask, taskLine, taskListOutput, tenantTasks } from "./task-list.js";
import { hubEndPreview, hubPreview, previewEntry, sessionPreviews } from "./preview-tools.js";
import { hubRecordings } from "./recordings-tool.js";
import { hubLiveView } from "./live-tools.js";

/** What a hub tool's call works with: the hub, the calling session, and the call's way back to its client. */
interface HubToolContext extends HubToolCall {
  hub: SessionServices;
}

const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const mibField = z.number().describe("MiB");

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
    memoryMiB: {
      total: mib(os.totalmem()),
      free: mib(os.freemem()),
      cgroupUsed: mibOrNull(readNumber("/sys/fs/cgroup/memory.current")),
      cgroupLimit: mibOrNull(readNumber("/sys/fs/cgroup/memory.max")),
    },
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

const hubStatus = defineTool({
  name: "hub_status",
  title: "Hub status",
  description: "agentbox's servers with their state, pid, restarts and tool counts, plus uptime and version.",
  input: {},
  output: hubStatusShape,
  annotations: readOnly,
  async run(_args, { hub, session }: HubToolContext) {
    const status = hub.status(session.tenant);
    const lines = status.servers.map(
      (s) =>
        `${s.name.padEnd(12)} ${s.state.padEnd(10)} pid ${s.pid ?? "-"}  tools ${s.tools}  restarts ${s.restarts}${s.lastError ? `\n  why: ${s.lastError}` : ""}`,
    );
    const head = `agentbox ${status.version}, up ${status.uptimeSeconds} s, ${status.sessions} sessions, workspace ${status.workspace}`;
    const { isolation } = status;
    const network = `network: ${isolation.network} (${isolation.networkSummary})${isolation.ports ? `; your TCP ports: ${isolation.ports}` : ""}`;
    return reply.data(`${head}\nisolation: ${isolation.mode} (${isolation.summary})\n${network}\n${lines.join("\n")}`, status);
  },
});

const serverUse = z.object({
  name: z.string(),
  state: z.string(),
  pid: z.number().nullable(),
  processes: z.number().describe("The server's process and everything it started"),
  rssMiB: mibField,
  cpuSeconds: z.number(),
});

const hubMetrics = defineTool({
  name: "hub_metrics",
  title: "Resource use",
  description:
    "Your sessions and calls (ok, errors, rate-limited), your server processes' memory and CPU (with what they started), " +
    "your workspace's free disk and the container's capacity.",
  input: {},
  output: {
    container: z.object({
      cpus: z.number(),
      loadAverage: z.array(z.number()).optional().describe("1, 5 and 15 minutes (a hub with one tenant only)"),
      cgroupCpuSeconds: z.number().optional(),
      memoryMiB: z.object({ total: mibField, free: mibField.optional(), cgroupUsed: mibField.nullable().optional(), cgroupLimit: mibField.nullable() }),
    }),
    disk: z.object({ path: z.string(), totalMiB: mibField.optional(), freeMiB: mibField.optional(), error: z.string().optional() }),
    hub: z.object({ pid: z.number(), rssMiB: mibField, cpuSeconds: z.number(), sessions: z.number() }).optional().describe("A hub with one tenant only"),
    sessions: z.number().describe("Your open sessions"),
    calls: z.object({ total: z.number(), ok: z.number(), tool_error: z.number(), error: z.number(), rate_limited: z.number() }),
    servers: z.array(serverUse),
  },
  annotations: readOnly,
  async run(_args, { hub, session }: HubToolContext) {
    // one read of the process table, off the event loop: a tenant may run thousands of processes
    const procs = await listProcessesAsync();
    const servers = session.tenant.children.map((c) => {
      const usage = c.pid ? treeUsage(c.pid, procs) : undefined;
      return {
        name: c.name,
        state: c.state,
        pid: c.pid ?? null,
        processes: usage?.processes ?? 0,
        rssMiB: mib(usage?.rssBytes ?? 0),
        cpuSeconds: usage?.cpuSeconds ?? 0,
      };
    });
    const { tenant } = session;
    const figures = { sessions: hub.sessions.all().filter((s) => s.tenant === tenant).length, calls: hub.metrics.tenantCalls(tenant.name) };
    // the hub and the container are shared by every tenant: their use says what the others do
    // (hub-wide figures are on /metrics, for the operator); a tenant alone sees them
    // people signed in with OAuth share the hub with whoever signs in next
    const shared = hub.tenants.length > 1 || hub.tenants.some((t) => t.person !== undefined);
    const cpu = process.cpuUsage();
    const data = {
      container: shared ? containerCapacity() : containerUsage(),
      disk: diskUsage(tenant.workspace),
      ...(shared
        ? {}
        : { hub: { pid: process.pid, rssMiB: mib(process.memoryUsage().rss), cpuSeconds: (cpu.user + cpu.system) / 1e6, sessions: figures.sessions } }),
      ...figures,
      servers,
    };
    const lines = servers.map((s) => `${s.name.padEnd(12)} ${String(s.rssMiB).padStart(7)} MiB  ${s.cpuSeconds.toFixed(1)} s CPU  ${s.processes} processes`);
    const { calls } = figures;
    const head = `${figures.sessions} sessions, ${calls.total} tool calls (${calls.ok} ok, ${calls.tool_error} tool errors, ${calls.error} failed, ${calls.rate_limited} rate-limited)`;
    const hubLine = data.hub ? `hub ${data.hub.rssMiB} MiB; ` : "";
    return reply.data(`${head}\n${hubLine}workspace disk free ${"freeMiB" in data.disk ? data.disk.freeMiB : "?"} MiB\n${lines.join("\n")}`, data);
  },
});

const hubSessions = defineTool({
  name: "hub_sessions",
  title: "Your session",
  description:
    "Your client session (age, idle time, protocol era, what each server holds for it), your tenant's sessions and 2026 contexts, " +
    "and its tasks with their status.",
  input: pagingInput({ unit: "session", defaultLimit: 50, maxLimit: 500 }),
  output: {
    id: z.string(),
    transport: z.enum(SESSION_KINDS),
    ...eraFields,
    ageSeconds: z.number(),
    idleSeconds: z.number(),
    callsInFlight: z.number(),
    held: z.record(z.string(), z.unknown()).describe("What each server holds for this session, by server name"),
    ...sessionListOutput,
    ...taskListOutput,
    previews: z.array(previewEntry).describe("This session's open previews (hub_preview)"),
  },
  annotations: readOnly,
  async run({ offset, limit }, { hub, session }: HubToolContext) {
    const held: Record<string, unknown> = {};
    await Promise.all(
      session.tenant.children
        .filter((c) => c.state === "ready") // an idle child holds nothing for anyone
        .map(async (child) => {
          try {
            const answer = (await child.request(DESCRIBE_SESSION_METHOD, { session: session.id })) as { state?: Record<string, unknown> };
            if (answer.state && Object.keys(answer.state).length) held[child.name] = answer.state;
          } catch {
            // a third-party server does not know this request; it holds nothing we can show
          }
        }),
    );
    // one offset and limit page both lists: the longer one says where the next page starts
    const page = pageOfItems(tenantSessions(hub.sessions, session), offset, limit);
    const tasks = pageOfItems(tenantTasks(hub.tasks, session.tenant.name), offset, limit);
    const both = tasks.total! > page.total! ? tasks : page;
    try {
      assertOffsetInRange(both, "sessions and tasks");
    } catch (err) {
      return reply.error((err as Error).message);
    }
    const own = describeSession(session, session);
    const data = {
      id: session.id,
      transport: own.transport,
      era: own.era,
      protocolVersion: own.protocolVersion,
      ageSeconds: own.ageSeconds,
      idleSeconds: Math.round(session.quietMs / 1000),
      callsInFlight: own.callsInFlight,
      held,
      tenantSessions: page.items.map((s) => describeSession(s, session)),
      tenantTasks: tasks.items.map(describeTask),
      offset: page.offset,
      nextOffset: both.nextOffset,
      total: page.total,
      tasksTotal: tasks.total!,
      previews: sessionPreviews(hub, session),
    };
    const what =
      data.era === "modern"
        ? `2026 context ${data.id} (MCP ${data.protocolVersion})`
        : `session ${data.id} (${data.transport}, MCP ${data.protocolVersion ?? "none: plain JSON"})`;
    const head = `${what}, ${data.ageSeconds} s old`;
    const taskList = data.tasksTotal ? [`your tenant's tasks (${data.tasksTotal}):`, ...data.tenantTasks.map(taskLine)] : [];
    const previewList = data.previews.length
      ? [`this session's previews:`, ...data.previews.map((p) => `  port ${p.port}  ${p.url}  until ${p.expiresAt}`)]
      : [];
    const list = [
      ...previewList,
      `your tenant's sessions (* this one):`,
      ...data.tenantSessions.map(sessionLine),
      ...taskList,
      pageFooter(both, "sessions and tasks", "hub_sessions"),
    ];
    return reply.data(`${head}\n${JSON.stringify(held, null, 2)}\n${list.filter(Boolean).join("\n")}`, data);
  },
});

const hubEndSession = defineTool({
  name: "hub_end_session",
  title: "End your session",
  description: "End your client session now: every server frees what it held for it. Reconnect to start a new one.",
  input: {},
  output: { ended: z.string().describe("The id of the session that ended") },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(_args, { hub, session, channel }: HubToolContext) {
    // closing the session closes the stream this answer travels on: close it once the answer is written
    channel.afterReply(() => void hub.sessions.close(session.id, "ended"));
    return reply.data(`Session ${session.id} ends now; every server frees what it held for it.`, { ended: session.id });
  },
});

const TOOLS: Tool<HubToolContext>[] = [
  hubStatus,
  hubMetrics,
  hubSessions,
  hubCalls,
  hubEndSession,
  hubNewContext,
  hubCancelTask,
  hubPreview,
  hubEndPreview,
  hubRecordings,
  hubLiveView,
];

/** The hub's own tools, serving `hub` (hub/hub.ts passes itself). */
export function hubTools(hub: SessionServices): HubTools {
  const byName = new Map(TOOLS.map((t) => [t.name, t]));
  const listed = TOOLS.map(listedTool).map(offerContext);
  return {
    list: () => listed,
    call: (name, args, call) => byName.get(name)?.call(args, { ...call, hub }),
  };
}
