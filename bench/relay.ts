// The relay benchmark (issue 17, "The cost"): what the hub's server side costs per tools/call
// against the cheapest possible relay and against the two peers, in one run. The same raw client
// (bench/raw-client.ts) drives all four with 32 sessions in a closed loop, a fixed number of echo
// calls per contender and round, rounds interleaved. The figure that counts is server CPU per call
// from /proc: the front process and every process it started (the echo child or children),
// which moves little with the machine's load, unlike calls/s.
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import { errorMessage } from "../servers/lib/log.js";
import { ECHO_ARGS } from "./echo-setup.js";
import { inBatches } from "./load.js";
import { GC_TRACE_FLAG, watchScavenges, type ScavengeTotals } from "./gc-trace.js";
import { cpuMs, parentMap } from "./proc.js";
import { RawSession, type Era } from "./raw-client.js";
import { writeResult } from "./results.js";
import { median, round, spread } from "./stats.js";
import { echoServer, startBareRelay, startHub, startMcpProxy, startSupergateway, tempDir, waitHubReady, type HttpTarget } from "./targets.js";

const SESSIONS = Number(process.env.BENCH_RELAY_SESSIONS ?? 32);
// at 4,000-6,000 calls/s, 3,000 calls were a 0.6 s window: a few dozen 10 ms CPU ticks, and one periodic task of the hub (its
// process sweep) in or out of it moved a round by a tenth
const CALLS = Number(process.env.BENCH_RELAY_CALLS ?? 10_000);
// enough for every contender's JIT to settle: with 500, the first round measured warm-up for all four
const WARM_CALLS = Number(process.env.BENCH_RELAY_WARM_CALLS ?? 3000);
const ROUNDS = Number(process.env.BENCH_RELAY_ROUNDS ?? 5);
/** A comma list of contender keys to run alone while working on one (its results are then not the recorded comparison). */
const ONLY = process.env.BENCH_RELAY_ONLY?.split(",").map((k) => k.trim());
/** Issue 41's targets (issue 17's were 1.5× and 3×): agentbox at most 1.25× the bare relay in both eras, and at least 4× cheaper than the cheaper peer. */
export const HUB_OVER_RELAY_TARGET = 1.25;
export const PEER_OVER_HUB_TARGET = 4;

interface Contender {
  key: string;
  label: string;
  era: Era;
  target: HttpTarget;
  tool: string;
  agent: http.Agent;
  sessions: RawSession[];
}

/** A target that says what its scavenges kept (the hub, started with the GC trace). */
type Traced = HttpTarget & { gc?: { totals(): ScavengeTotals } };

interface Round {
  /** server CPU ms per call: front + children, and the two apart */
  cpu: number;
  front: number;
  children: number;
  client: number;
  callsPerSecond: number;
  errors: number;
  firstError?: string;
  /** Bytes the front promoted to the old generation per call, and their share of what it allocated (targets with the GC trace). */
  promotedPerCall?: number;
  promotedShare?: number;
}

type Peer = [key: string, label: string, start: (workspace: string) => Promise<HttpTarget>, tool: string, era: Era, capabilities?: Record<string, unknown>];

const PEERS: Peer[] = [
  ["relay", "bare Node relay (parse, re-id, pipe; no sessions)", startBareRelay, "echo", "2025"],
  ["hub", "agentbox", sharedEchoHub, "echo_echo", "2025"],
  // the same hub process, called by 2026-07-28 clients: no session, the envelope on every request
  ["hub-2026", "agentbox, MCP 2026-07-28 clients", sharedEchoHub, "echo_echo", "2026"],
  // and by clients that may be asked something during a call (most desktop and IDE clients declare roots): the SDK's path
  ["hub-roots", "agentbox, 2025 clients declaring roots", sharedEchoHub, "echo_echo", "2025", { roots: { listChanged: true } }],
  ["supergateway", "supergateway (stateful: a child per session)", startSupergateway, "echo", "2025"],
  ["mcp-proxy", "mcp-proxy (one shared child)", startMcpProxy, "echo", "2025"],
];

/**
 * The hub with the echo child, once the child is ready: a server that is not in the build's
 * manifest has no tools to call until its child has listed them.
 */
async function startEchoHub(workspace: string): Promise<Traced> {
  // one line per collection: what each call left to the old generation is recorded beside its CPU
  const hub = await startHub({ servers: { echo: echoServer() }, workspace, nodeArgs: [GC_TRACE_FLAG] });
  const gc = watchScavenges(hub.spawned.process.stdout!);
  if (!(await waitHubReady(hub.origin, 30_000))) {
    await hub.stop();
    throw new Error(`the echo child did not get ready:\n${hub.spawned.output.slice(-10).join("\n")}`);
  }
  return { ...hub, gc };
}

/**
 * The hub of the "hub" contender, for the 2026 clients: one hub serves both eras (as in production),
 * and a second hub started as root would end the first one's tenant processes as leftovers. The
 * contenders are measured one at a time, so the process tree's CPU is each era's own.
 */
let echoHub: Promise<Traced> | undefined;
function sharedEchoHub(workspace: string): Promise<Traced> {
  echoHub ??= startEchoHub(workspace).then((hub) => {
    let stopped: Promise<void> | undefined;
    return { ...hub, stop: () => (stopped ??= hub.stop()) };
  });
  return echoHub;
}

/** `total` calls shared by the sessions, each calling again as soon as its reply is in. */
async function fixedCalls(c: Contender, total: number): Promise<{ calls: number; errors: number; firstError?: string; seconds: number }> {
  let issued = 0;
  let errors = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  await Promise.all(
    c.sessions.map(async (s) => {
      while (issued < total) {
        issued++;
        try {
          await s.callTool(c.tool, ECHO_ARGS);
        } catch (err) {
          errors++;
          firstError ??= errorMessage(err);
        }
      }
    }),
  );
  return { calls: issued, errors, firstError, seconds: (performance.now() - t0) / 1000 };
}

async function measure(c: Contender): Promise<Round> {
  await fixedCalls(c, WARM_CALLS); // the hub starts its child on the first call; JIT warms up
  const pid = c.target.pid;
  const tree0 = cpuMs(pid, true, parentMap());
  const front0 = cpuMs(pid);
  const client0 = process.cpuUsage();
  const gc0 = (c.target as Traced).gc?.totals();
  const run = await fixedCalls(c, CALLS);
  const clientUsage = process.cpuUsage(client0);
  const tree = cpuMs(pid, true, parentMap()) - tree0;
  const front = cpuMs(pid) - front0;
  const gc1 = (c.target as Traced).gc?.totals();
  const kept = gc0 && gc1 ? { promoted: gc1.promoted - gc0.promoted, allocated: gc1.allocated - gc0.allocated } : undefined;
  return {
    ...(kept && kept.allocated > 0 ? { promotedPerCall: kept.promoted / run.calls, promotedShare: kept.promoted / kept.allocated } : {}),
    cpu: tree / run.calls,
    front: front / run.calls,
    children: (tree - front) / run.calls,
    client: (clientUsage.user + clientUsage.system) / 1000 / run.calls,
    callsPerSecond: run.calls / run.seconds,
    errors: run.errors,
    firstError: run.firstError,
  };
}

async function startContender(
  key: string,
  label: string,
  start: (workspace: string) => Promise<HttpTarget>,
  tool: string,
  era: Era,
  workspace: string,
  capabilities?: Record<string, unknown>,
): Promise<Contender> {
  const target = await start(workspace);
  const agent = new http.Agent({ keepAlive: true, maxSockets: SESSIONS });
  const c: Contender = { key, label, era, target, tool, agent, sessions: [] };
  try {
    const url = new URL(target.url);
    c.sessions = await inBatches(SESSIONS, 8, async () => {
      const s = new RawSession(url, agent, era, capabilities);
      await s.initialize();
      return s;
    });
    await c.sessions[0].callTool(tool, ECHO_ARGS); // prove it works before measuring it
    return c;
  } catch (err) {
    await stopContender(c);
    throw err;
  }
}

async function stopContender(c: Contender): Promise<void> {
  await inBatches(c.sessions.length, 8, (i) => c.sessions[i].close());
  c.agent.destroy();
  await c.target.stop();
}

export async function runRelay(log: (msg: string) => void): Promise<Record<string, unknown>> {
  const workspace = tempDir("agentbox-bench-relay-");
  const contenders: Contender[] = [];
  const unavailable: Record<string, string> = {};
  const loadBefore = os.loadavg();
  try {
    for (const [key, label, start, tool, era, capabilities] of PEERS) {
      if (ONLY && !ONLY.includes(key)) continue;
      try {
        contenders.push(await startContender(key, label, start, tool, era, workspace, capabilities));
      } catch (err) {
        unavailable[key] = errorMessage(err).split("\n")[0];
      }
    }
    log(`relay: ${contenders.map((c) => c.key).join(", ")} ready with ${SESSIONS} sessions each`);
    const rounds = new Map<string, Round[]>(contenders.map((c) => [c.key, []]));
    const loadPerRound: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const order = contenders.map((_, i) => contenders[(i + r) % contenders.length]);
      for (const c of order) rounds.get(c.key)!.push(await measure(c));
      loadPerRound.push(round(os.loadavg()[0], 2));
      log(
        `relay round ${r + 1}/${ROUNDS}: ` +
          contenders
            .map((c) => {
              const last = rounds.get(c.key)!.at(-1)!;
              return `${c.key} ${last.cpu.toFixed(3)} ms CPU/call (front ${last.front.toFixed(3)} + children ${last.children.toFixed(3)})`;
            })
            .join(", "),
      );
    }
    const result = summarizeRounds(contenders, rounds);
    const out = {
      method: `raw node:http client with keep-alive (bench/raw-client.ts), ${SESSIONS} sessions opened with initialize where the server has sessions, closed loop of echo tools/call; per contender and round ${WARM_CALLS} warm-up calls, then ${CALLS} measured calls; ${ROUNDS} rounds, contenders interleaved. Server CPU from /proc utime+stime (10 ms ticks) of the front process and all its descendants, before and after the measured calls; median over rounds; ratios taken round by round. The hub runs with ${GC_TRACE_FLAG}: bytes promoted to the old generation per measured call, and their share of the bytes allocated, from its scavenges' lines`,
      sessions: SESSIONS,
      callsPerRound: CALLS,
      rounds: ROUNDS,
      ...result,
      loadAverage: { before: loadBefore.map((l) => round(l, 2)), afterEachRound: loadPerRound, after: os.loadavg().map((l) => round(l, 2)) },
      unavailable,
    };
    if (!ONLY) writeResult("relay", out);
    return out;
  } finally {
    await Promise.allSettled(contenders.map(stopContender));
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

function summarizeRounds(contenders: Contender[], rounds: Map<string, Round[]>) {
  const per = (key: string) => rounds.get(key) ?? [];
  const ratio = (a: string, b: string) => {
    const ra = per(a);
    const rb = per(b);
    return ra.length && rb.length
      ? spread(
          ra.map((x, i) => x.cpu / rb[i].cpu),
          2,
        )
      : undefined;
  };
  const peers = ["supergateway", "mcp-proxy"].filter((k) => per(k).length);
  const cheaperPeer = peers.sort((a, b) => median(per(a).map((x) => x.cpu)) - median(per(b).map((x) => x.cpu)))[0];
  const hubOverRelay = ratio("hub", "relay");
  const cheaperPeerOverHub = cheaperPeer ? ratio(cheaperPeer, "hub") : undefined;
  // issue 24: what a 2026-07-28 call costs against a 2025 one and against the relay, in the same run
  const modernOverHub = ratio("hub-2026", "hub");
  const modernOverRelay = ratio("hub-2026", "relay");
  // what a client that may be asked something pays against one that may not, on the same hub
  const rootsOverHub = ratio("hub-roots", "hub");
  return {
    contenders: Object.fromEntries(
      contenders.map((c) => {
        const rs = per(c.key);
        const firstError = rs.find((x) => x.firstError)?.firstError;
        return [
          c.key,
          {
            label: c.label,
            cpuMsPerCall: spread(rs.map((x) => x.cpu)),
            frontMsPerCall: round(median(rs.map((x) => x.front))),
            childrenMsPerCall: round(median(rs.map((x) => x.children))),
            clientMsPerCall: round(median(rs.map((x) => x.client))),
            callsPerSecond: spread(
              rs.map((x) => x.callsPerSecond),
              0,
            ),
            errors: rs.reduce((a, x) => a + x.errors, 0),
            ...(rs.every((x) => x.promotedPerCall !== undefined)
              ? {
                  promotedBytesPerCall: Math.round(median(rs.map((x) => x.promotedPerCall!))),
                  promotedShare: round(median(rs.map((x) => x.promotedShare!)), 3),
                }
              : {}),
            ...(firstError ? { firstError } : {}),
          },
        ];
      }),
    ),
    ratios: { hubOverRelay, cheaperPeer, cheaperPeerOverHub, modernOverHub, modernOverRelay, rootsOverHub },
    target: {
      hubOverRelay: HUB_OVER_RELAY_TARGET,
      metHubOverRelay: hubOverRelay !== undefined && hubOverRelay.median <= HUB_OVER_RELAY_TARGET,
      metModernOverRelay: modernOverRelay !== undefined && modernOverRelay.median <= HUB_OVER_RELAY_TARGET,
      cheaperPeerOverHub: PEER_OVER_HUB_TARGET,
      metCheaperPeerOverHub: cheaperPeerOverHub !== undefined && cheaperPeerOverHub.median >= PEER_OVER_HUB_TARGET,
    },
  };
}
