// Table 15: what a preview costs a request, through the preview URL and straight to the app in the
// same rounds; and, when bench/results/previews-before.json holds a run of the code before previews
// kept their connections to the app, that run beside it.
import { failed, header, ms, num, range, table, type J } from "./report-format.js";

const TITLE = "15. Previews: a request through the preview URL and straight to the app";

function rows(r: J, label?: string): string[][] {
  return Object.entries((r.results ?? {}) as J).map(([name, s]) => [
    label ? `${name} (${label})` : name,
    range(s.requestsPerSecond, (v) => num(v)),
    range(s.p50Ms, (v) => ms(v)),
    range(s.p99Ms, (v) => ms(v)),
    range(s.hubCpuUsPerRequest, (v) => num(v, 0)),
  ]);
}

export function previews(r: J | undefined, before: J | undefined): string {
  const bad = failed(TITLE, r);
  if (bad || !r) return bad!;
  const earlier = before && !before.failed ? rows(before, `at ${before.environment?.commit ?? "an earlier commit"}`) : [];
  return [
    `### ${TITLE}`,
    header(r),
    String(r.method ?? ""),
    table(["load", "requests/s", "p50", "p99", "hub CPU µs per request"], [...rows(r), ...earlier]),
    before
      ? `The rows marked with a commit are the same benchmark run against that commit's code (bench/results/previews-before.json), ${before.environment?.date?.slice(0, 10) ?? ""}.`
      : "",
  ]
    .filter(Boolean)
    .join("\n\n");
}
