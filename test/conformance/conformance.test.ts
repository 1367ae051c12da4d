// The official MCP conformance suite (@modelcontextprotocol/conformance, run with Node 22) against
// the hub, with every scenario's tools, resources and prompts served by a child behind it
// (test/fixtures/conformance-server.ts, published without a prefix as the suite expects). A
// scenario passes only if the hub carries its feature across faithfully: content, errors,
// logging, progress, sampling, elicitation, resources, subscriptions, prompts and completions.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { conformanceCli, explain, failures, preflight, PROJECT_ROOT, runConformance } from "../helpers/conformance-cli.js";
import { fixture, startHub, textOf, type TestHub } from "../helpers/hub.js";

const CLI = conformanceCli("conformance");
/** Scenarios known to fail for reasons outside the hub (see test/conformance/README.md); none today. */
const BASELINE = path.join(PROJECT_ROOT, "conformance-baseline.yml");
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

function runSuite(url: string, extraArgs: string[]) {
  const baseline = fs.existsSync(BASELINE) ? ["--expected-failures", BASELINE] : [];
  return runConformance(CLI, url, [...extraArgs, ...baseline], RUN_TIMEOUT_MS);
}

describe("MCP conformance suite through the hub", () => {
  let hub: TestHub;

  before(async () => {
    preflight(CLI);
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

  // The tools the 2026-07-28 scenarios call ask their questions as 2025 requests; a 2025 session
  // answers them as they come, in order, and the tool finishes with every answer.
  test("the fixture's input-required tools ask a 2025 session and use its answers", async () => {
    const client = await hub.connect({ capabilities: { elicitation: {}, sampling: {}, roots: {} } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (req) => {
      asked.push(req.params.message);
      const field = Object.keys(req.params.mode === "url" ? {} : req.params.requestedSchema.properties)[0];
      return { action: "accept", content: { [field]: { name: "Ada", color: "green", context: "tests" }[field] ?? "?" } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, () => ({ role: "assistant", content: { type: "text", text: "Hi there" }, model: "test" }));
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: "file:///workspace", name: "workspace" }] }));
    const multiRound = await client.callTool({ name: "test_input_required_result_multi_round", arguments: {} });
    assert.equal(textOf(multiRound as never), "Ada likes green.");
    assert.deepEqual(asked, ["Step 1: What is your name?", "Step 2: What is your favorite color?"]);
    const multiple = await client.callTool({ name: "test_input_required_result_multiple_inputs", arguments: {} });
    assert.equal(textOf(multiple as never), "name=Ada, greeting=Hi there, roots=file:///workspace");
    const prompt = await client.getPrompt({ name: "test_input_required_result_prompt", arguments: {} });
    assert.deepEqual(prompt.messages[0].content, { type: "text", text: "Use this context: tests" });
  });
});
