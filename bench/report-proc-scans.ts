// Table 17: the hub's reads of the process table (bench/proc-scans.ts).
import { failed, header, num, range, table, type J } from "./report-format.js";

const TITLE = "17. The hub's reads of the process table: CPU, and how long its event loop waits (issue 41)";

export function procScans(r: J | undefined): string {
  const bad = failed(TITLE, r);
  if (bad || !r) return bad!;
  const rows = ((r.tables ?? []) as J[]).flatMap((t) =>
    Object.entries((t.operations ?? {}) as J).map(([name, s]) => [
      `${t.label} (${t.processes})`,
      name,
      range(s.cpuMs, (v) => num(v, 2)),
      range(s.longestTurnMs, (v) => num(v, 2)),
    ]),
  );
  return [
    `### ${TITLE}`,
    header(r),
    String(r.method ?? ""),
    table(["processes on the machine", "read", "CPU ms", "longest wait of the event loop, ms"], rows),
  ].join("\n\n");
}
