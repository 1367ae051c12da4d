// The official MCP conformance suite 0.2.0-alpha.12 at `--requirements 2026-07-28` (the frozen
// list of scenarios that revision requires, run at its stateless wire), with Node 22, against a
// real hub whose child serves every tool, resource and prompt the scenarios call
// (test/fixtures/conformance-server.ts, a 2025-era child published without a prefix). A check
// passes only if the hub serves 2026-07-28 at the front and carries the feature across to the
// child and back: input_required rounds made of the child's own requests, capabilities, logging,
// subscriptions, caching hints. The 2025-11-25 suite stays in ./conformance.test.ts.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { conformanceCli, explain, preflight, PROJECT_ROOT, runConformance, type SuiteRun } from "../helpers/conformance-cli.js";
import { fixture, startHub, type TestHub } from "../helpers/hub.js";

const CLI = conformanceCli("conformance-2026");
const REVISION = "2026-07-28";
const RUN_TIMEOUT_MS = 420_000;

/**
 * A RATCHET: the checks passing through the hub when this was last raised; raise it whenever more
 * pass, never lower it. The target per check (the test below): the 130
 * the suite's reference "everything" server passes, all of which the hub passes, and more. The
 * count covers every scenario the requirement set runs, the scored ones and those it runs only for
 * visibility (tasks, pending), as the CLI's "Total: N passed" does. 161 needs the hub's 2026-07-28
 * serving, the child's input keys, a state per round, the caller's capabilities, the questions a
 * child asks in one go carried in one round, and input_required on prompts/get; 165 (169 passed in
 * the run that raised it, at a load above 10) adds the Mcp-Param-* checks and slow_compute's plain
 * answer to a caller without the tasks extension; 190 (194 passed in the run that raised it) adds the
 * hub's tasks (hub/tasks/): 43 of the 45 tasks-* checks (194-195 passed); 192 (196 passed in the run
 * that raised it) adds a task-only tool's input_required rounds before its task (tasks-mrtr-composition):
 * 44 of the 45 tasks-* checks, the 45th skipped by the suite itself (tasks-status-notifications).
 */
const PASSING_CHECKS_FLOOR = 192;
const TARGET_PASSING_CHECKS = 130;

/** The tasks extension's scenarios in this suite (0.2.0-alpha.12), run for visibility outside the score: all must pass. */
const TASKS_SCENARIOS = [
  "tasks-capability-negotiation",
  "tasks-dispatch-and-envelope",
  "tasks-lifecycle",
  "tasks-mrtr-composition",
  "tasks-mrtr-input",
  "tasks-request-headers",
  "tasks-request-state-removal",
  "tasks-required-task-error",
  "tasks-status-notifications",
  "tasks-wire-fields",
];
/** A scenario the suite records as SKIPPED whoever runs it (its one check says why): it has no check to pass. */
const SKIPPED_BY_THE_SUITE = new Set(["tasks-status-notifications"]);

/** Scenarios with no failing check today: each must keep passing (a ratchet as well; add, never remove). */
const PASSING_SCENARIOS = [
  "caching",
  "completion-complete",
  "dns-rebinding-protection",
  "http-header-validation",
  "input-required-result-basic-elicitation",
  "input-required-result-basic-list-roots",
  "input-required-result-basic-sampling",
  "input-required-result-capability-check",
  "input-required-result-ignore-extra-params",
  "input-required-result-missing-input-response",
  "input-required-result-multi-round",
  "input-required-result-multiple-input-requests",
  "input-required-result-non-tool-request",
  "input-required-result-request-state",
  "input-required-result-result-type",
  "input-required-result-tampered-state",
  "input-required-result-unsupported-methods",
  "input-required-result-validate-input",
  "json-schema-2020-12",
  "prompts-get-embedded-resource",
  "prompts-get-simple",
  "prompts-get-with-args",
  "prompts-get-with-image",
  "prompts-list",
  "resources-list",
  "resources-read-binary",
  "resources-read-text",
  "resources-templates-read",
  "sep-2164-resource-not-found",
  // every tasks-* scenario the suite scores (it skips one itself)
  ...TASKS_SCENARIOS.filter((scenario) => !SKIPPED_BY_THE_SUITE.has(scenario)),
  "server-sse-multiple-streams",
  "server-stateless",
  "tools-call-audio",
  "tools-call-embedded-resource",
  "tools-call-error",
  "tools-call-image",
  "tools-call-mixed-content",
  "tools-call-simple-text",
  "tools-call-with-progress",
  "tools-list",
];

/**
 * Checks of server-stateless that read a response stream for a fixed window of the suite's own
 * (500-1500 ms) and fail if no frame came within it: on a loaded machine the hub's first frame can
 * come later. A scenario whose only failures are these runs once more, alone, and its second
 * run's checks stand (the run's output names it); any other failure stands as it is.
 */
const WINDOWED_CHECKS = new Set([
  "sep-2575-http-server-no-independent-requests-on-stream",
  "sep-2575-server-no-log-without-loglevel",
  "sep-2575-server-sends-subscription-ack",
  "sep-2575-server-tags-subscription-id",
  "sep-2575-server-honors-notification-filter",
]);

/** Run again, alone, each scenario that failed only checks with a fixed window; the scenarios run again. */
async function rerunWindowed(run: SuiteRun, url: string): Promise<string[]> {
  const again = [...run.scenarios]
    .filter(([, checks]) => {
      const failed = checks.filter((c) => c.status === "FAILURE");
      return failed.length > 0 && failed.every((c) => WINDOWED_CHECKS.has(c.id));
    })
    .map(([scenario]) => scenario);
  for (const scenario of again) {
    const second = await runConformance(CLI, url, ["--scenario", scenario, "--spec-version", REVISION], RUN_TIMEOUT_MS);
    const checks = second.scenarios.get(scenario);
    if (checks) run.scenarios.set(scenario, checks);
  }
  return again;
}

interface Reference {
  total: number;
  /** "<scenario> / <check id>" → how many times the reference passed it in one run. */
  passing: Record<string, number>;
}

const REFERENCE = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, "test", "conformance", "reference-2026-07-28.json"), "utf8")) as Reference;

/** The reference's passing checks the hub passed fewer times, each named once. */
function behindReference(run: SuiteRun): string[] {
  const hub = new Map<string, number>();
  for (const [scenario, checks] of run.scenarios) {
    for (const check of checks.filter((c) => c.status === "SUCCESS")) hub.set(`${scenario} / ${check.id}`, (hub.get(`${scenario} / ${check.id}`) ?? 0) + 1);
  }
  return Object.entries(REFERENCE.passing)
    .filter(([check, times]) => (hub.get(check) ?? 0) < times)
    .map(([check]) => check);
}

const passed = (run: SuiteRun) => [...run.scenarios.values()].flat().filter((c) => c.status === "SUCCESS").length;

/** A scenario passes when it recorded at least one successful check and no failing one. */
function scenarioPasses(run: SuiteRun, scenario: string): boolean {
  const checks = run.scenarios.get(scenario) ?? [];
  return checks.some((c) => c.status === "SUCCESS") && !checks.some((c) => c.status === "FAILURE");
}

describe(`MCP conformance suite at --requirements ${REVISION} through the hub`, () => {
  let hub: TestHub;
  let run: SuiteRun;
  let ranAgain: string[] = [];

  before(
    async () => {
      preflight(CLI);
      hub = await startHub({ extraServers: { conformance: { ...fixture("conformance-server"), prefix: "" } } });
      run = await runConformance(CLI, hub.url, ["--requirements", REVISION], RUN_TIMEOUT_MS);
      ranAgain = await rerunWindowed(run, hub.url);
    },
    { timeout: 2 * RUN_TIMEOUT_MS + 60_000 },
  );
  after(() => hub?.stop());

  test(`at least ${PASSING_CHECKS_FLOOR} checks pass (ratchet)`, (t) => {
    assert.ok(run.scenarios.size > 0, `the suite recorded no scenario:\n${explain(run)}`);
    const count = passed(run);
    // the count and what is behind the reference, in the run's output: what a floor is raised from
    t.diagnostic(`${count} checks passed; behind the reference: ${behindReference(run).join(", ") || "none"}`);
    t.diagnostic(`run again, alone, after a check with a fixed window failed: ${ranAgain.join(", ") || "none"}`);
    assert.ok(
      count >= PASSING_CHECKS_FLOOR,
      `${count} checks passed, the floor is ${PASSING_CHECKS_FLOOR} (target ${TARGET_PASSING_CHECKS}):\n${explain(run)}`,
    );
  });

  test(`every check the reference server passes (${TARGET_PASSING_CHECKS}) passes through the hub`, () => {
    assert.equal(REFERENCE.total, TARGET_PASSING_CHECKS);
    const newGaps = behindReference(run);
    assert.deepEqual(newGaps, [], `checks the reference server passes that fail through the hub:\n${newGaps.join("\n")}\n\n${explain(run)}`);
  });

  test(`the tasks extension's ${TASKS_SCENARIOS.length} scenarios (tasks-*) all run, and every check they score passes through the hub`, (t) => {
    const tasks = [...run.scenarios].filter(([scenario]) => scenario.startsWith("tasks-"));
    const checks = tasks.flatMap(([, list]) => list);
    const failing = tasks.flatMap(([scenario, list]) =>
      list.filter((c) => c.status === "FAILURE" || c.status === "WARNING").map((c) => `${scenario} / ${c.id}: ${c.errorMessage ?? ""}`),
    );
    t.diagnostic(
      `tasks-* checks passed: ${checks.filter((c) => c.status === "SUCCESS").length} of ${checks.length}; failing: ${failing.join(" | ") || "none"}`,
    );
    assert.deepEqual(
      tasks.map(([scenario]) => scenario).sort(),
      [...TASKS_SCENARIOS].sort(),
      `the suite ran other tasks-* scenarios than the ten it has:\n${explain(run)}`,
    );
    assert.deepEqual(failing, [], explain(run));
    // the suite skips tasks-status-notifications itself (its harness awaits a rewrite): every other one must pass a check
    const scored = TASKS_SCENARIOS.filter((scenario) => !SKIPPED_BY_THE_SUITE.has(scenario));
    assert.deepEqual(
      scored.filter((scenario) => !scenarioPasses(run, scenario)),
      [],
      explain(run),
    );
  });

  test("every scenario that passed before still passes", (t) => {
    const newlyPassing = [...run.scenarios.keys()].filter((scenario) => scenarioPasses(run, scenario) && !PASSING_SCENARIOS.includes(scenario));
    t.diagnostic(`passing, not yet in PASSING_SCENARIOS: ${newlyPassing.join(", ") || "none"}`);
    const regressed = PASSING_SCENARIOS.filter((scenario) => !scenarioPasses(run, scenario));
    assert.deepEqual(regressed, [], explain(run));
  });
});
