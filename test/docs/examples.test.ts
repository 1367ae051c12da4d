// Every shell and JSON example of README.md and docs/*.md is run as printed, or says in the file
// what it needs that this test run lacks. The marker before an example's fence says how it is
// checked (docs/development.md lists them): config files are loaded through the hub's own loader,
// client entries are connected the way the client would, shell blocks run (against a hub on 8080
// when they call one), servers are started, reached and stopped with Ctrl-C. An example with no
// marker, or one the test does not know, fails here.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, before, describe, test, type TestContext } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { loadConfig } from "../../hub/config/config.js";
import { startHub, tempDir, type TestHub } from "../helpers/hub.js";
import { until } from "../helpers/wait.js";
import { checkOf, EXAMPLE_LANGUAGES, portsFor, runShell, scratchCheckout, serveShell, withPorts, type Check } from "./examples.js";
import { codeBlocks, type CodeBlock } from "./markdown.js";
import { documentationFiles, root } from "./project.js";

const examples = documentationFiles()
  .flatMap((file) => codeBlocks(file, fs.readFileSync(path.join(root, file), "utf8")))
  .filter((block) => block.language in EXAMPLE_LANGUAGES);
const where = (block: CodeBlock) => `${block.file}:${block.line}`;
const checked = examples.flatMap((block) => {
  const check = checkOf(block);
  return "error" in check ? [] : [{ block, check }];
});
const ofKind = <K extends Check["kind"]>(kind: K) =>
  checked.filter((e): e is { block: CodeBlock; check: Extract<Check, { kind: K }> } => e.check.kind === kind);

/** Where a reader puts their checkout in the examples; the test's is this one. */
const CHECKOUT_PLACEHOLDER = "/path/to/agentbox";

describe("the documentation's examples", () => {
  test("every shell and JSON example is run or says what it needs", () => {
    assert.ok(examples.length > 20, `only ${examples.length} examples found in ${documentationFiles().join(", ")}`);
    const wrong = examples.flatMap((block) => {
      const check = checkOf(block);
      return "error" in check ? [`  ${where(block)}: ${check.error}`] : [];
    });
    assert.deepEqual(wrong, [], `examples without a marker the test knows (docs/development.md lists them):\n${wrong.join("\n")}`);
  });

  test("config files are accepted by the hub's loader as printed", () => {
    const dir = tempDir("agentbox-docs-config-");
    try {
      for (const { block } of ofKind("config")) {
        const file = path.join(dir, "agentbox.json");
        fs.writeFileSync(file, block.code);
        try {
          loadConfig({ config: file }, {});
        } catch (err) {
          assert.fail(`${where(block)} is refused: ${(err as Error).message}`);
        }
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test("printed output parses as JSON", () => {
    for (const { block } of ofKind("output")) {
      const whole = (() => {
        try {
          return JSON.parse(block.code) as unknown;
        } catch {
          return undefined;
        }
      })();
      if (whole !== undefined) continue;
      for (const line of block.code.split("\n").filter((l) => l.trim())) {
        assert.doesNotThrow(() => JSON.parse(line), `${where(block)}: neither JSON nor JSON lines: ${line.slice(0, 120)}`);
      }
    }
  });

  // before the hub below takes 8080: a served example runs on the ports it prints
  for (const { block, check } of ofKind("serves")) {
    test(`${where(block)} serves ${check.url} until Ctrl-C`, async (t) => {
      const ports = await portsFor([block.code, check.url], (message) => t.diagnostic(message));
      if (/\bnginx\b/.test(block.code)) await ensureNginx();
      const scratch = scratchCheckout();
      try {
        const output = await serveShell(withPorts(block.code, ports), scratch, withPorts(check.url, ports));
        t.diagnostic(`served; its output:\n${output.slice(-2000)}`);
      } finally {
        // its links into the checkout go, never what they point at
        fs.rmSync(scratch, { recursive: true, force: true });
      }
    });
  }
});

describe("the documentation's examples against a hub on 8080", () => {
  let hub: TestHub;
  let ports: Map<number, number>;
  let scratch: string;
  const notes: string[] = [];

  before(async () => {
    ports = await portsFor(["8080"], (message) => notes.push(message));
    // as `npm start` serves: every built-in server, started on first use, no key
    hub = await startHub({ port: ports.get(8080), env: { AGENTBOX_START: "lazy" } });
    scratch = scratchCheckout();
  });
  after(async () => {
    await hub?.stop();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  const noted = (t: TestContext) => notes.forEach((n) => t.diagnostic(n));

  for (const { block, check } of ofKind("run")) {
    test(`${where(block)} runs${check.withHub ? " against the hub" : ""}`, async (t) => {
      noted(t);
      const { code, output } = await runShell(withPorts(block.code, ports), scratch);
      assert.equal(code, 0, `${where(block)} exited with ${code}:\n${output}`);
      if (check.prints) assert.ok(output.includes(check.prints), `${where(block)} did not print ${check.prints}:\n${output.slice(0, 3000)}`);
    });
  }

  for (const { block } of ofKind("client")) {
    test(`${where(block)}: the client's entry connects and lists the tools`, async (t) => {
      noted(t);
      const entries = (JSON.parse(withPorts(block.code, ports)) as { mcpServers: Record<string, Record<string, unknown>> }).mcpServers;
      for (const [name, entry] of Object.entries(entries)) {
        const client = new Client({ name: `docs-example-${name}`, version: "1" });
        if (typeof entry.command === "string") {
          const args = ((entry.args as string[]) ?? []).map((arg) => arg.replace(CHECKOUT_PLACEHOLDER, root));
          await client.connect(new StdioClientTransport({ command: entry.command, args, cwd: scratch, stderr: "ignore" }));
        } else {
          const headers = (entry.headers as Record<string, string>) ?? {};
          await client.connect(new StreamableHTTPClientTransport(new URL(String(entry.url)), { requestInit: { headers } }));
        }
        try {
          const names = (await client.listTools()).tools.map((tool) => tool.name);
          const search = String(entry.url ?? "").includes("catalog=search");
          assert.ok(names.includes(search ? "hub_find_tools" : "file_read"), `${where(block)}: ${name} lists ${names.join(", ")}`);
        } finally {
          await client.close();
        }
      }
    });
  }

  test("printed audit lines have the keys of the hub's own", async () => {
    // a 2025 session's call, and the session ended by hub_end_session, as the printed lines are
    const client = await hub.connect({ name: "docs-example" });
    await client.callTool({ name: "hub_status", arguments: {} });
    await client.callTool({ name: "hub_end_session", arguments: {} });
    await client.close();
    const real = () =>
      hub.logs.flatMap((line) => {
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          return entry.audit ? [entry] : [];
        } catch {
          return [];
        }
      });
    const sameKind = (printed: Record<string, unknown>) => (entry: Record<string, unknown>) =>
      entry.audit === printed.audit && entry.event === printed.event && entry.reason === printed.reason && (entry.audit !== "call" || entry.client);
    for (const { block } of ofKind("output").filter((e) => e.check.auditTrail)) {
      for (const line of block.code.split("\n").filter((l) => l.trim())) {
        const printed = JSON.parse(line) as Record<string, unknown>;
        const found = await until(`a ${printed.audit} line of the hub like ${where(block)}'s`, () => real().find(sameKind(printed)));
        assert.deepEqual(
          Object.keys(printed).sort(),
          Object.keys(found).sort(),
          `${where(block)}: printed keys differ from the hub's line ${JSON.stringify(found)}`,
        );
      }
    }
  });
});

interface RunModule {
  ensureNginx(): string;
}

/** Debian's nginx, installed when missing, as the router tests get it (deploy/nginx/run.mjs). */
async function ensureNginx(): Promise<void> {
  const run = (await import(pathToFileURL(path.join(root, "deploy", "nginx", "run.mjs")).href)) as RunModule;
  run.ensureNginx();
}
