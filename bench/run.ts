// npm run bench [filter...]: runs every benchmark (or those whose name contains a filter), writes
// bench/results/<name>.json, then regenerates the tables in bench/README.md from all results.
import { errorMessage } from "../servers/lib/log.js";
import { runCatalog } from "./catalog.js";
import { runColdStart } from "./coldstart.js";
import { runMemory } from "./memory.js";
import { runOperations } from "./operations.js";
import { runOverhead } from "./overhead.js";
import { runRelay } from "./relay.js";
import { runSoak } from "./soak.js";
import { runRestart } from "./restart.js";
import { writeReadme } from "./report.js";
import { writeResult } from "./results.js";
import { runThroughput } from "./throughput.js";
import { runWatch } from "./watch.js";
import { runTracing } from "./tracing.js";
import { runLive } from "./live.js";
import { runDensity } from "./density.js";
import { runPreviews } from "./previews.js";
import { runServerCalls } from "./server-calls.js";
import { runProcScans } from "./proc-scans.js";

type Benchmark = (log: (msg: string) => void) => Promise<Record<string, unknown>>;

const BENCHMARKS: [string, Benchmark][] = [
  ["overhead", runOverhead],
  ["throughput", runThroughput],
  ["coldstart", runColdStart],
  ["operations", runOperations],
  ["memory", runMemory],
  ["catalog", runCatalog],
  ["relay", runRelay],
  ["soak", runSoak],
  ["restart", runRestart],
  ["watch", runWatch],
  ["tracing", runTracing],
  ["live", runLive],
  ["density", runDensity],
  ["previews", runPreviews],
  ["server-calls", runServerCalls],
  ["proc-scans", runProcScans],
];

async function main(): Promise<void> {
  const filters = process.argv.slice(2).filter((a) => !a.startsWith("-"));
  const chosen = BENCHMARKS.filter(([name]) => filters.length === 0 || filters.some((f) => name.includes(f)));
  if (chosen.length === 0) {
    process.stderr.write(`No benchmark matches ${filters.join(" ")}. Available: ${BENCHMARKS.map(([n]) => n).join(", ")}\n`);
    process.exit(2);
  }
  const log = (msg: string) => process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
  const started = performance.now();
  let failed = 0;
  for (const [name, bench] of chosen) {
    const t0 = performance.now();
    log(`${name}: starting`);
    try {
      await bench(log);
      log(`${name}: done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    } catch (err) {
      // a benchmark that cannot run is a result too: record why instead of stopping the others
      failed++;
      log(`${name}: FAILED ${errorMessage(err)}`);
      writeResult(name, { failed: errorMessage(err) });
    }
  }
  const readme = writeReadme();
  log(`all done in ${((performance.now() - started) / 1000).toFixed(1)} s; tables written to ${readme}`);
  process.exit(failed ? 1 : 0);
}

void main();
