// Table 16: what a call costs the server that runs it, and, when bench/results/server-calls-before.json
// holds a run of the code before each tool's input schema was kept (issue 41), that run beside it.
import { failed, header, num, range, table, type J } from "./report-format.js";

const TITLE = "16. Server calls: CPU a call costs the server that runs it (issue 41)";

export function serverCalls(r: J | undefined, before: J | undefined): string {
  const bad = failed(TITLE, r);
  if (bad || !r) return bad!;
  const earlier = before && !before.failed ? ((before.results ?? {}) as J) : {};
  const at = `at ${before?.environment?.commit ?? "an earlier commit"}`;
  const rows = Object.entries((r.results ?? {}) as J).map(([name, s]) => [
    name,
    range(s.cpuUsPerCall, (v) => num(v, 0)),
    range(s.callsPerSecond, (v) => num(v)),
    earlier[name] ? `${range(earlier[name].cpuUsPerCall, (v) => num(v, 0))} ${at}` : "–",
  ]);
  return [
    `### ${TITLE}`,
    header(r),
    String(r.method ?? ""),
    table(["server: call", "server CPU µs per call", "calls/s", "before"], rows),
    Object.keys(earlier).length
      ? `"before" is the same benchmark run against that commit's code (bench/results/server-calls-before.json), ${before?.environment?.date?.slice(0, 10) ?? ""}.`
      : "",
  ]
    .filter(Boolean)
    .join("\n\n");
}
