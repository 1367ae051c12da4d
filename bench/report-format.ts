// The Markdown pieces every benchmark's table is built from (./report.ts, ./report-density.ts).
export type J = Record<string, any>; // free-form JSON read back

export const ms = (v: unknown, d = 2) => (typeof v === "number" && Number.isFinite(v) ? `${v.toFixed(d)} ms` : "–");
export const num = (v: unknown, d = 0) => (typeof v === "number" && Number.isFinite(v) ? v.toFixed(d) : "–");
export const range = (s: J | undefined, f: (v: unknown) => string) => (s ? `${f(s.median)} (${f(s.min)}–${f(s.max)})` : "–");
export const ratio = (s: J | undefined) => (s && Number.isFinite(s.median) ? `${num(s.median, 2)}× (${num(s.min, 2)}–${num(s.max, 2)})` : "–");
export const yes = (b: unknown) => (b ? "met" : "**missed**");
export const table = (head: string[], rows: string[][]) =>
  [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");

export function header(r: J): string {
  const e = r.environment ?? {};
  return `_Measured ${String(e.date ?? "")
    .slice(0, 16)
    .replace("T", " ")} UTC, ${e.cpus} CPUs, load average ${(e.loadAverage ?? []).join(" / ")}, node ${e.node}, commit ${e.commit}._`;
}

export function failed(title: string, r: J | undefined): string | undefined {
  if (!r) return `### ${title}\n\nNot run yet.`;
  if (r.failed) return `### ${title}\n\nThe benchmark failed: ${r.failed}`;
  return undefined;
}
