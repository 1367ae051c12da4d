// Load drivers shared by the latency and throughput benchmarks.
import { errorMessage } from "../servers/lib/log.js";

export type Call = () => Promise<void>;

export interface SequentialResult {
  latencies: number[];
  errors: number;
  firstError?: string;
}

/** `count` calls one after the other; latency of each in ms. */
export async function sequential(call: Call, count: number): Promise<SequentialResult> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    try {
      await call();
      latencies.push(performance.now() - t0);
    } catch (err) {
      errors++;
      firstError ??= errorMessage(err);
    }
  }
  return { latencies, errors, firstError };
}

export interface WindowResult {
  calls: number;
  /** calls completed from the first warm-up call to the end, for CPU per call */
  allCalls: number;
  errors: number;
  firstError?: string;
  latencies: number[];
  seconds: number;
  callsPerSecond: number;
}

/**
 * One worker per caller, each calling in a loop for warmMs + windowMs; calls that complete inside
 * the measuring window count (and give its latency samples), so warm-up and the drain after the
 * window are left out whatever the latency.
 * `onTick` runs every tickMs during the window (memory sampling).
 */
export async function closedLoop(callers: Call[], warmMs: number, windowMs: number, onTick?: () => void, tickMs = 250): Promise<WindowResult> {
  const begin = performance.now();
  const windowStart = begin + warmMs;
  const windowEnd = windowStart + windowMs;
  const latencies: number[] = [];
  let errors = 0;
  let allCalls = 0;
  let firstError: string | undefined;
  const ticker = onTick ? setInterval(onTick, tickMs) : undefined;
  await Promise.all(
    callers.map(async (call) => {
      while (performance.now() < windowEnd) {
        const t0 = performance.now();
        try {
          await call();
          const t1 = performance.now();
          allCalls++;
          if (t1 >= windowStart && t1 <= windowEnd) latencies.push(t1 - t0);
        } catch (err) {
          const t1 = performance.now();
          if (t1 >= windowStart && t1 <= windowEnd) errors++;
          firstError ??= errorMessage(err);
        }
      }
    }),
  );
  if (ticker) clearInterval(ticker);
  const seconds = windowMs / 1000;
  return { calls: latencies.length, allCalls, errors, firstError, latencies, seconds, callsPerSecond: latencies.length / seconds };
}

/** Run async jobs with at most `width` at a time (opening many sessions without a stampede). */
export async function inBatches<T>(count: number, width: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await job(i);
      }
    }),
  );
  return out;
}
