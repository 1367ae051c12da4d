// The container's part of table 4: what bench/docker.mjs recorded (the image's size, `docker run`
// to ready) and what each part of the image weighs.
import { table, type J } from "./report-format.js";

export function docker(r: J | undefined): string {
  if (!r) return "`docker run` to ready: no `bench/results/docker.json` yet (written by `bench/docker.*`).";
  const flat = Object.entries(r).filter(([k, v]) => k !== "environment" && (typeof v === "number" || typeof v === "string" || typeof v === "boolean"));
  const nested = Object.entries(r).filter(([k, v]) => k !== "environment" && v && typeof v === "object" && !Array.isArray(v));
  const rows = [
    ...flat.map(([k, v]) => [k, String(v)]),
    ...nested.map(([k, v]) => [
      k,
      Object.entries(v as J)
        .map(([kk, vv]) => `${kk}: ${typeof vv === "object" ? JSON.stringify(vv) : vv}`)
        .join(", "),
    ]),
  ];
  const parts = (r.imageParts ?? []) as { part: string; paths: string; MB: number }[];
  return [
    "From `bench/results/docker.json` (targets (issue 41): image ≤ 1,000 MB, `docker run` to ready ≤ 1.5 s):",
    table(["measure", "value"], rows),
    ...(parts.length
      ? [
          "What each part of the image weighs, read inside it (`du`: the files' bytes, which add up to a little more than Docker's count of the image):",
          table(
            ["part", "where", "MB"],
            parts.map((p) => [p.part, p.paths ? `\`${p.paths}\`` : "", String(p.MB)]),
          ),
        ]
      : []),
  ].join("\n\n");
}
