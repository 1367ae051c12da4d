// Table 14 (issue 41): memory per agent, now and, when bench/results/density-before.json holds a
// run of the code before the cuts, beside it; and the hub's process tree by kind of process.
import { failed, header, num, table, yes, type J } from "./report-format.js";

const TITLE = "14. Density: memory per agent (issue 41)";

/** The reading at the largest level, its kinds as rows of MiB per agent over idle. */
function kindsPerAgent(r: J): Map<string, { processes: number; pssMiB: number; perAgentMiB: number }> {
  const last = (r.levels as J[]).at(-1)!;
  const idle = (r.idle?.kinds ?? {}) as J;
  const rows = new Map<string, { processes: number; pssMiB: number; perAgentMiB: number }>();
  for (const [kind, v] of Object.entries(last.kinds as J)) {
    rows.set(kind, { processes: v.processes, pssMiB: v.pssMiB, perAgentMiB: (v.pssMiB - (idle[kind]?.pssMiB ?? 0)) / last.agents });
  }
  return rows;
}

export function density(r: J | undefined, before: J | undefined): string {
  const bad = failed(TITLE, r);
  if (bad || !r) return bad!;
  // the "before" run is shown beside a later one, not beside itself
  const old = before && !before.failed && before.environment?.date !== r.environment?.date ? before : undefined;
  const oldLevel = (agents: number) => (old?.levels as J[] | undefined)?.find((l) => l.agents === agents);
  const levelRows = (r.levels as J[]).map((l) => {
    const o = oldLevel(l.agents);
    return [
      String(l.agents),
      `${num(l.totalPssMiB, 1)} MiB`,
      String(l.processes),
      `**${num(l.pssPerAgentMiB, 1)} MiB**`,
      `**${num(l.agentsPerGiB, 1)}**`,
      l.idleCpuMsPerS === undefined ? "–" : num(l.idleCpuMsPerS, 1),
      o
        ? `${num(o.pssPerAgentMiB, 1)} MiB, ${num(o.agentsPerGiB, 1)} per GiB, ${o.processes} processes${o.idleCpuMsPerS === undefined ? "" : `, idle ${num(o.idleCpuMsPerS, 1)} ms/s`}`
        : "–",
    ];
  });
  const now = kindsPerAgent(r);
  const then = old ? kindsPerAgent(old) : new Map();
  const agents = (r.levels as J[]).at(-1)!.agents;
  const kinds = [...new Set([...now.keys(), ...then.keys()])].sort((a, b) => (now.get(b)?.pssMiB ?? 0) - (now.get(a)?.pssMiB ?? 0));
  const cell = (v: { processes: number; pssMiB: number; perAgentMiB: number } | undefined) =>
    v ? [String(v.processes), num(v.pssMiB, 1), num(v.perAgentMiB, 2)] : ["–", "–", "–"];
  const kindRows = kinds.map((k) => [k, ...cell(now.get(k)), ...(old ? cell(then.get(k)) : [])]);
  const kept = r.valuesKept ?? {};
  return [
    `### ${TITLE}`,
    header(r),
    String(r.method ?? ""),
    `Idle hub: ${num(r.idle?.totalPssMiB, 1)} MiB PSS in ${r.idle?.processes} processes` +
      (r.idle?.idleCpuMsPerS === undefined ? "." : `, ${num(r.idle.idleCpuMsPerS, 1)} ms of CPU a second.`) +
      (old
        ? ` Before: commit ${old.environment?.commit}, idle ${num(old.idle?.totalPssMiB, 1)} MiB PSS in ${old.idle?.processes} processes` +
          (old.idle?.idleCpuMsPerS === undefined ? "." : `, ${num(old.idle.idleCpuMsPerS, 1)} ms of CPU a second.`)
        : ""),
    table(["agents", "total PSS", "processes", "PSS per agent (over idle)", "agents per GiB", "idle CPU, ms a second", "before"], levelRows),
    `By kind of process with ${agents} agents: processes, PSS in MiB, and MiB per agent over the idle hub's processes of that kind.`,
    table(["kind", "processes", "PSS MiB", "MiB per agent", ...(old ? [`before: processes`, "before: PSS MiB", "before: MiB per agent"] : [])], kindRows),
    `Every agent's Python value read back after the readings: ${kept.lost ?? "–"} of ${kept.checked ?? "–"} lost. Target ≥ ${r.target?.agentsPerGiB} agents per GiB at ${agents} agents: ${yes(r.target?.met)}.`,
  ].join("\n\n");
}
