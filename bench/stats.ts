// Summaries of timing samples: every figure the benchmark reports is a median with its spread,
// never a single run.
export interface Summary {
  n: number;
  p50: number;
  p99: number;
  p25: number;
  p75: number;
  min: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of an already sorted array. */
function rank(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    n: sorted.length,
    p50: rank(sorted, 50),
    p99: rank(sorted, 99),
    p25: rank(sorted, 25),
    p75: rank(sorted, 75),
    min: sorted[0] ?? NaN,
    max: sorted[sorted.length - 1] ?? NaN,
    mean: sorted.length ? sum / sorted.length : NaN,
  };
}

export function median(values: number[]): number {
  return summarize(values).p50;
}

/** Round for JSON output: timings in ms keep three decimals (µs resolution). */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function roundSummary(s: Summary, digits = 3): Summary {
  const out = { ...s };
  for (const key of Object.keys(out) as (keyof Summary)[]) if (key !== "n") out[key] = round(out[key], digits);
  return out;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Median and range of per-round figures, rounded for the results file. */
export function spread(values: number[], digits = 3): { median: number; min: number; max: number } {
  return { median: round(median(values), digits), min: round(Math.min(...values), digits), max: round(Math.max(...values), digits) };
}
