// The official MCP conformance suite (@modelcontextprotocol/conformance, run with Node 22) against
// the hub, with every scenario's tools, resources and prompts served by a child behind it
// (test/fixtures/conformance-server.ts, published without a prefix as the suite expects). A
// scenario passes only if the hub carries its feature across faithfully: content, errors,
// logging, progress, sampling, elicitation, resources, subscriptions, prompts and completions.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { CallToolResultSchema, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { distRoot } from "../../hub/config/config.js";
import { fixture, startHub, tempDir, textOf, type TestHub } from "../helpers/hub.js";
import { node22 } from "../helpers/node22.js";

const ROOT = path.resolve(distRoot(), "..");
const NODE22 = node22();
const CLI = path.join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
/** Scenarios known to fail for reasons outside the hub (see test/conformance/README.md); none today. */
const BASELINE = path.join(ROOT, "conformance-baseline.yml");
const RUN_TIMEOUT_MS = 150_000;

/** Scenarios that exercise the hub's forwarding in both directions: the suite must still have them. */
const CROSSING_THE_HUB = [
  "server-initialize",
  "logging-set-level",
  "completion-complete",
  "tools-call-with-logging",
  "tools-call-with-progress",
  "tools-call-sampling",
  "tools-call-elicitation",
  "elicitation-sep1330-enums",
  "resources-templates-read",
  "resources-subscribe",
  "prompts-get-with-args",
  "dns-rebinding-protection",
];

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | string;
  errorMessage?: string;
}

interface SuiteRun {
  code: number | null;
  output: string;
  /** Checks per scenario, read from the results folders the CLI writes. */
  scenarios: Map<string, Check[]>;
}

function preflight(): void {
  if (!fs.existsSync(NODE22)) {
    throw new Error(`Node 22 not found at ${NODE22}: set AGENTBOX_NODE22 to a Node 22 binary.`);
  }
  if (!fs.existsSync(CLI)) throw new Error(`Conformance suite not found at ${CLI}: run npm install (dev dependency @modelcontextprotocol/conformance).`);
}

/** Run the CLI's server mode; results go to a fresh folder, never into the repository. */
async function runSuite(url: string, extraArgs: string[]): Promise<SuiteRun> {
  const outDir = tempDir("agentbox-conformance-");
  const args = [CLI, "server", "--url", url, "--output-dir", outDir, ...extraArgs];
  if (fs.existsSync(BASELINE)) args.push("--expected-failures", BASELINE);
  const child = spawn(NODE22, args, { cwd: outDir, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), RUN_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  clearTimeout(timer);
  try {
    return { code, output, scenarios: readResults(outDir) };
  } finally {
    fs.rmSync(outDir, { recursive: true, force: true });
  }
}

// The CLI writes one folder per scenario: server-<scenario>-<ISO timestamp>/checks.json
function readResults(outDir: string): Map<string, Check[]> {
  const scenarios = new Map<string, Check[]>();
  for (const entry of fs.readdirSync(outDir)) {
    const match = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry);
    const file = path.join(outDir, entry, "checks.json");
    if (!match || !fs.existsSync(file)) continue;
    scenarios.set(match[1], JSON.parse(fs.readFileSync(file, "utf8")) as Check[]);
  }
  return scenarios;
}

function failures(run: SuiteRun): string[] {
  return [...run.scenarios].flatMap(([scenario, checks]) =>
    checks.filter((c) => c.status === "FAILURE").map((c) => `${scenario} / ${c.id}: ${c.errorMessage ?? "failed"}`),
  );
}

function explain(run: SuiteRun): string {
  const failed = failures(run);
  const summary = run.output.slice(run.output.lastIndexOf("=== SUMMARY ==="));
  return `exit code ${run.code}\n${failed.join("\n") || "(no failing checks recorded)"}\n${summary || run.output.slice(-3000)}`;
}

describe("MCP conformance suite through the hub", () => {
  let hub: TestHub;

  before(async () => {
    preflight();
    hub = await startHub({ extraServers: { conformance: { ...fixture("conformance-server"), prefix: "" } } });
  });
  after(() => hub?.stop());

  test("the active server suite passes", { timeout: RUN_TIMEOUT_MS + 30_000 }, async () => {
    const run = await runSuite(hub.url, []);
    const missing = CROSSING_THE_HUB.filter((s) => !run.scenarios.has(s));
    assert.deepEqual(missing, [], `scenarios missing from the run:\n${explain(run)}`);
    assert.deepEqual(failures(run), [], explain(run));
    assert.equal(run.code, 0, explain(run));
  });

  // Still in the CLI's "pending" suite, so not part of the run above; the hub must relay a
  // child's raw input schema ($schema, $defs, additionalProperties) untouched.
  test("tool input schemas keep their JSON Schema 2020-12 keywords (json-schema-2020-12)", { timeout: RUN_TIMEOUT_MS + 30_000 }, async () => {
    const run = await runSuite(hub.url, ["--scenario", "json-schema-2020-12"]);
    const checks = run.scenarios.get("json-schema-2020-12") ?? [];
    assert.ok(checks.length >= 4, `expected the scenario's checks:\n${explain(run)}`);
    assert.deepEqual(failures(run), [], explain(run));
    assert.equal(run.code, 0, explain(run));
  });

  // The suite runs one scenario at a time; these two look at what it cannot see.
  test("every progress notification arrives, including the one sent just before the result", async () => {
    const client = await hub.connect();
    for (let round = 0; round < 5; round++) {
      const seen: number[] = [];
      const result = await client.callTool({ name: "test_tool_with_progress", arguments: {} }, CallToolResultSchema, {
        onprogress: (p) => void seen.push(p.progress),
      });
      assert.match(textOf(result as never), /0, 50, 100/);
      assert.deepEqual(seen, [0, 50, 100], `round ${round}`);
    }
  });

  test("log messages of concurrent calls reach only the session that made the call", async () => {
    const clients = await Promise.all([hub.connect({ name: "a" }), hub.connect({ name: "b" })]);
    const received = clients.map(() => [] as string[]);
    clients.forEach((client, i) => client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void received[i].push(String(n.params.data))));
    await Promise.all(clients.map((client) => client.callTool({ name: "test_tool_with_logging", arguments: {} })));
    for (const messages of received) {
      assert.deepEqual(messages, ["test_tool_with_logging started", "test_tool_with_logging working", "test_tool_with_logging finished"]);
    }
  });
});
