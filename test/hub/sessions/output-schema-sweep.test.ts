// Every tool that declares an outputSchema, through a real hub running every server, called with
// the official SDK client, whose callTool validates structuredContent against that schema — also
// on isError results — and throws when they disagree (the model then never sees the message).
// Each tool goes through at least one success and one error path; the rule checked is: a success's
// structuredContent always validates, and an error's does too whenever it carries one (the data a
// failure keeps, such as a command's exit code; docs/tools.md, "Failures keep their data"). The table below must name
// every such tool, so a new tool cannot slip past the sweep.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import util from "node:util";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateTaskResultSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { startHub, tempDir, textOf, type TestHub } from "../../helpers/hub.js";
import { startFakeArxiv, type FakeArxiv } from "../../arxiv/fake-arxiv.js";
import { startSite, type Site } from "../../fixtures/browser/site.js";
import { freePort, startInTerminal } from "../previews/apps.js";

type Args = Record<string, unknown>;
/** What earlier steps learned (a terminal id) and where the local stand-ins listen. */
interface Memo {
  site: string;
  workspace: string;
  terminal?: string;
  /** A running task of the sweep's tenant, started by another session (its rate limit is its own). */
  task: string;
  /** A port an app of the sweep's tenant listens on, and the preview of it (hub_preview, hub_end_preview). */
  appPort?: number;
  preview?: string;
  /** A session of the tenant's own, whose terminal runs that app (the sweep's session has the terminal's rate limit spent). */
  apps: Client;
}
type ArgsOf = Args | ((memo: Memo) => Args);

interface Entry {
  /** Runs before the tool's calls: navigation, fixture files. */
  prepare?(client: Client, memo: Memo): Promise<void>;
  ok: ArgsOf;
  /** Reads what later steps need from the success's structuredContent. */
  keep?(data: Record<string, unknown>, memo: Memo): void;
  /**
   * Arguments that make the tool fail: the error path the sweep drives. A tool without input has
   * no failure to provoke; its error path is the rate-limited call every tool gets at the end.
   */
  error: ArgsOf | typeof RATE_LIMITED_ONLY;
  /** What the error path's structuredContent must hold, for tools whose failures keep their data. */
  errorData?: Record<string, unknown>;
  /** The success ends the session it runs in (hub_end_session): it gets a session of its own. */
  ownSession?: true;
}

const RATE_LIMITED_ONLY = "rate-limited only";

// In call order: steps of one server lean on the ones before (write, then edit; create, then kill).
const SWEEP: Record<string, Entry> = {
  file_write: { ok: { path: "sweep/a.txt", content: "one\ntwo\none\n", createParents: true }, error: { path: "/etc/agentbox-sweep", content: "x" } },
  file_read: { ok: { path: "sweep/a.txt" }, error: { path: "/etc/passwd" } },
  file_read_many: { ok: { paths: ["sweep/a.txt", "sweep/missing.txt"] }, error: { paths: [] } },
  // the known case: an ambiguous match used to come back as isError with {"edit","matches","lines"}
  file_edit: {
    ok: { path: "sweep/a.txt", edits: [{ oldText: "two", newText: "deux" }] },
    error: { path: "sweep/a.txt", edits: [{ oldText: "one", newText: "uno" }] },
  },
  file_list: { ok: { path: "sweep" }, error: { path: "sweep/a.txt" } },
  file_tree: { ok: {}, error: { path: "sweep/missing" } },
  file_find: { ok: { pattern: "*.txt" }, error: { pattern: "*", path: "/etc" } },
  file_grep: { ok: { pattern: "one" }, error: { pattern: "(" } },
  file_copy: { ok: { source: "sweep/a.txt", destination: "sweep/b.txt" }, error: { source: "sweep/a.txt", destination: "sweep/b.txt" } },
  file_move: { ok: { source: "sweep/b.txt", destination: "sweep/c.txt" }, error: { source: "sweep/b.txt", destination: "sweep/d.txt" } },
  file_delete: { ok: { path: "sweep/c.txt" }, error: { path: "sweep/c.txt" } },
  file_mkdir: { ok: { path: "sweep/dir" }, error: { path: "sweep/a.txt" } },
  file_info: { ok: { path: "sweep/a.txt" }, error: { path: "sweep/missing.txt" } },
  file_snapshot_take: { ok: { name: "sweep" }, error: { name: "sweep" } },
  file_snapshot_list: { ok: {}, error: RATE_LIMITED_ONLY },
  file_snapshot_restore: { ok: { name: "sweep" }, error: { name: "no-such-snapshot" } },
  file_snapshot_delete: { ok: { name: "sweep" }, error: { name: "sweep" } },
  file_changes: { ok: { path: "sweep" }, error: { path: "/etc" } },

  terminal_exec: {
    ok: { command: "echo hi" },
    error: { command: "echo out; echo err >&2; exit 3" },
    errorData: { exitCode: 3, stdout: "out\n", stderr: "err\n", timedOut: false },
  },
  terminal_session_create: {
    ok: {},
    keep: (data, memo) => void (memo.terminal = String(data.id)),
    error: { cwd: "sweep/missing" },
  },
  terminal_session_send: { ok: (m) => ({ id: m.terminal, input: "echo sweep\n" }), error: { id: "no-such-terminal", input: "x" } },
  terminal_session_read: { ok: (m) => ({ id: m.terminal }), error: { id: "no-such-terminal" } },
  terminal_session_resize: { ok: (m) => ({ id: m.terminal, cols: 100, rows: 30 }), error: { id: "no-such-terminal", cols: 100, rows: 30 } },
  terminal_session_list: { ok: {}, error: RATE_LIMITED_ONLY },
  terminal_session_kill: { ok: (m) => ({ id: m.terminal }), error: (m) => ({ id: m.terminal }) },

  code_execute: { ok: { language: "python", code: "6 * 7" }, error: { language: "python", code: "1 / 0" }, errorData: { status: "error", stateKept: true } },
  code_sessions: { ok: {}, error: RATE_LIMITED_ONLY },
  code_reset: { ok: { language: "python" }, error: { language: "javascript", session: "no-such-session" } },
  code_install: {
    async prepare(_client, memo) {
      const dir = path.join(memo.workspace, "pkgs", "agentbox-sweep-js");
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "agentbox-sweep-js", version: "1.0.0", main: "index.js" }));
      fs.writeFileSync(path.join(dir, "index.js"), "exports.ok = true;\n");
      // npm runs and fails on it (offline): the failure that has data, npm's exit code and output
      const broken = path.join(memo.workspace, "pkgs", "agentbox-sweep-broken");
      fs.mkdirSync(broken, { recursive: true });
      fs.writeFileSync(path.join(broken, "package.json"), "{ not json");
    },
    ok: { language: "javascript", packages: ["./pkgs/agentbox-sweep-js"] },
    error: { language: "javascript", packages: ["./pkgs/agentbox-sweep-broken"] },
    errorData: { language: "javascript", packages: ["./pkgs/agentbox-sweep-broken"] },
  },

  markitdown_convert: {
    ok: { content: Buffer.from("a,b\n1,2\n").toString("base64"), name: "t.csv" },
    error: { source: "/etc/passwd" },
  },
  markitdown_formats: { ok: {}, error: RATE_LIMITED_ONLY },

  arxiv_search: { ok: { query: "quantum gravity", limit: 2 }, error: { query: "busy" } },
  arxiv_get: { ok: { ids: ["2401.00001"] }, error: { ids: ["not-an-id"] } },
  arxiv_download: { ok: { id: "2401.00001" }, error: { id: "2402.00002" } },
  arxiv_read: { ok: { id: "2401.00001", limit: 200 }, error: { id: "2405.99999" } },
  arxiv_list: { ok: {}, error: RATE_LIMITED_ONLY },

  browser_evaluate: {
    prepare: async (client, memo) => void (await client.callTool({ name: "browser_navigate", arguments: { url: `${memo.site}/console` } })),
    ok: { code: "document.title" },
    error: { code: "throw new Error('boom')" },
  },
  browser_snapshot: { ok: { limit: 200 }, error: { limit: 0 } },
  browser_get_text: { ok: {}, error: { selector: "#does-not-exist" } },
  browser_get_markdown: { ok: {}, error: { selector: "#does-not-exist" } },
  browser_links: { ok: {}, error: { limit: 0 } },
  browser_console_messages: { ok: {}, error: { level: "nonsense" } },
  browser_network_requests: { ok: {}, error: { limit: 0 } },
  browser_pdf: { ok: { path: "sweep/page.pdf" }, error: { path: "/etc/agentbox-sweep.pdf" } },
  browser_info: { ok: {}, error: RATE_LIMITED_ONLY },
  browser_record: { ok: { record: true }, error: { record: "yes" } },

  // the hub's own tools take no arguments: an unknown one is their error path
  hub_status: { ok: {}, error: { verbose: true } },
  hub_metrics: { ok: {}, error: { verbose: true } },
  hub_sessions: { ok: {}, error: { verbose: true } },
  hub_calls: { ok: { limit: 5 }, error: { limit: 0 } },
  hub_end_session: { ok: {}, error: { verbose: true }, ownSession: true },
  hub_new_context: { ok: {}, error: { verbose: true } },
  hub_cancel_task: { ok: (memo) => ({ taskId: memo.task }), error: { taskId: "made-up" } },
  hub_preview: {
    prepare: async (_client, memo) => {
      memo.appPort = await freePort();
      await startInTerminal(memo.apps, `python3 -m http.server ${memo.appPort} --bind 127.0.0.1`, /Serving HTTP/);
    },
    ok: (memo) => ({ port: memo.appPort }),
    keep: (data, memo) => void (memo.preview = String(data.token)),
    // nothing of the tenant listens on port 1
    error: { port: 1 },
  },
  hub_end_preview: { ok: (memo) => ({ preview: memo.preview }), error: { preview: "made-up" } },
  hub_recordings: { ok: {}, error: { offset: 5000 } },
  hub_live_view: { ok: {}, error: { tab: 0, terminal: "t0" } },
};

/** Every tool the hub lists, all pages of it (listTools also primes the client's output validators). */
async function listAll(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/**
 * One call through the SDK client; what went against the rule, or undefined. `expect` is the
 * outcome the table promises, so a step that no longer fails (or succeeds) shows up too.
 */
async function check(
  client: Client,
  tool: string,
  args: Args,
  expect: "ok" | "error",
  path: string = expect,
): Promise<{ problem?: string; result?: CallToolResult }> {
  const where = `${tool} (${path} path, ${JSON.stringify(args).slice(0, 120)})`;
  let result: CallToolResult;
  try {
    result = (await client.callTool({ name: tool, arguments: args })) as CallToolResult;
  } catch (err) {
    return { problem: `${where}: the SDK client threw: ${(err as Error).message}` };
  }
  if (expect === "ok" && result.isError) return { problem: `${where}: expected a success, got: ${textOf(result).slice(0, 300)}` };
  if (expect === "error" && !result.isError) return { problem: `${where}: expected an error result, got a success` };
  if (expect === "error" && !textOf(result).trim()) return { problem: `${where}: an error without text tells the model nothing` };
  return { result };
}

/** What an error result should keep of its data (as structuredContent) and does not. */
function missingData(tool: string, result: CallToolResult, expected: Record<string, unknown>): string[] {
  const data = result.structuredContent;
  if (data === undefined) return [`${tool} (error path): its data was lost: no structuredContent; text: ${textOf(result).slice(0, 200)}`];
  return Object.entries(expected)
    .filter(([key, value]) => !util.isDeepStrictEqual(data[key], value))
    .map(([key, value]) => `${tool} (error path): structuredContent.${key} is ${JSON.stringify(data[key])}, expected ${JSON.stringify(value)}`);
}

function argsOf(args: ArgsOf, memo: Memo): Args {
  return typeof args === "function" ? args(memo) : args;
}

/**
 * Calls the sweep makes to a tool in the sweep's own session before its rate-limited one: the
 * limit (per session on this keyless hub) lets exactly these through.
 */
const callsBeforeLimit = (entry: Entry) => (entry.error === RATE_LIMITED_ONLY || entry.ownSession ? 1 : 2);

describe("output schemas: every result an official client accepts", () => {
  let hub: TestHub;
  let client: Client;
  let arxiv: FakeArxiv;
  let site: Site;
  let codeData: string;
  const memo = {} as Memo;

  before(async () => {
    [arxiv, site] = await Promise.all([startFakeArxiv(), startSite()]);
    codeData = tempDir("agentbox-code-data-");
    // each swept tool may be called as often as the sweep calls it, then it is rate-limited; an hour's
    // window, so a slow machine cannot see the budget refill in the middle of the sweep
    const limits = { tools: Object.fromEntries(Object.entries(SWEEP).map(([name, entry]) => [name, `${callsBeforeLimit(entry)}/hour`])) };
    hub = await startHub({
      env: {
        ARXIV_API_URL: arxiv.apiUrl,
        ARXIV_PDF_URL: arxiv.pdfUrl,
        ARXIV_MIN_INTERVAL_MS: "0",
        AGENTBOX_CODE_DATA_DIR: codeData,
        AGENTBOX_RATE_LIMITS: JSON.stringify(limits),
      },
    });
    client = await hub.connect({ name: "schema-sweep" });
    // the 2025-11-25 task shape: a task the sweep's tenant owns, for hub_cancel_task's success path
    const starter = await hub.connect({ name: "schema-sweep-tasks" });
    const started = await starter.request(
      { method: "tools/call", params: { name: "terminal_exec", arguments: { command: "sleep 300" }, task: {} } },
      CreateTaskResultSchema,
    );
    await starter.close();
    const apps = await hub.connect({ name: "schema-sweep-apps" });
    Object.assign(memo, { site: site.origin, workspace: hub.workspace, task: started.task.taskId, apps });
  });

  after(async () => {
    await hub?.stop();
    await Promise.all([arxiv?.close(), site?.close()]);
    if (hub) fs.rmSync(hub.workspace, { recursive: true, force: true });
    if (codeData) fs.rmSync(codeData, { recursive: true, force: true });
  });

  test("the sweep's table names exactly the tools that declare an outputSchema", async () => {
    const withSchema = (await listAll(client)).filter((t) => t.outputSchema).map((t) => t.name);
    const missing = withSchema.filter((name) => !Object.hasOwn(SWEEP, name));
    assert.deepEqual(missing, [], `tools with an outputSchema and no entry in SWEEP (add a success and an error call for each): ${missing.join(", ")}`);
    const stale = Object.keys(SWEEP).filter((name) => !withSchema.includes(name));
    assert.deepEqual(stale, [], `SWEEP entries for tools that are gone or have no outputSchema: ${stale.join(", ")}`);
  });

  // Two steps of one test: the second needs every tool's budget spent, which the first does (an
  // hour's window, so the budget cannot refill between them)
  let budgetsSpent = false;
  test("every such tool gives a result the SDK client accepts: on a success and an error path, then rate-limited", async (t) => {
    await t.test("on a success and an error path", sweepSuccessAndError);
    await t.test(
      "once rate-limited, an isError result saying when to retry",
      { skip: budgetsSpent ? false : "the step before stopped short of spending every tool's budget, which this one needs" },
      sweepRateLimited,
    );
  });

  async function sweepSuccessAndError(): Promise<void> {
    await listAll(client);
    const problems: string[] = [];
    for (const [tool, entry] of Object.entries(SWEEP)) {
      await entry.prepare?.(client, memo);
      const own = entry.ownSession && (await hub.connect({ name: `schema-sweep-${tool}` }));
      if (own) await listAll(own);
      const ok = await check(own || client, tool, argsOf(entry.ok, memo), "ok");
      if (ok.problem) problems.push(ok.problem);
      else entry.keep?.(ok.result!.structuredContent as Record<string, unknown>, memo);
      if (entry.error === RATE_LIMITED_ONLY) continue;
      const failed = await check(client, tool, argsOf(entry.error, memo), "error");
      if (failed.problem) problems.push(failed.problem);
      else if (entry.errorData) problems.push(...missingData(tool, failed.result!, entry.errorData));
    }
    budgetsSpent = true;
    assert.deepEqual(problems, [], `violations:\n${problems.join("\n")}`);
  }

  // The hub answers a rate-limited call without structuredContent (retryAfterMs moves to _meta):
  // otherwise the SDK client rejects every one of these.
  async function sweepRateLimited(): Promise<void> {
    await listAll(client);
    const problems: string[] = [];
    for (const [tool, entry] of Object.entries(SWEEP)) {
      const args = argsOf(entry.error === RATE_LIMITED_ONLY ? entry.ok : entry.error, memo);
      const limited = await check(client, tool, args, "error", "rate-limited");
      if (limited.problem) problems.push(limited.problem);
      else if (!/retry in \d+ s/.test(textOf(limited.result!)))
        problems.push(`${tool}: the rate-limited text does not say when to retry: ${textOf(limited.result!)}`);
    }
    assert.deepEqual(problems, [], `violations:\n${problems.join("\n")}`);
  }
});
