// 5. Real operations, warm: each built-in tool doing a small real job through the hub, after a
// warm-up that pays for first-use costs (Chromium launch, interpreter start). A tool that is
// missing from the catalog or fails is reported with its message instead of a number.
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { errorMessage } from "../servers/lib/log.js";
import { listenForTenants } from "../test/helpers/tenant-ports.js";
import { startBuiltinHub } from "./builtin.js";
import { sequential } from "./load.js";
import { writeResult } from "./results.js";
import { roundSummary, summarize } from "./stats.js";
import { callOk, connectHttp, tempDir, type Connection } from "./targets.js";

const WARMUP = 2;
const REPEATS = Number(process.env.BENCH_OPERATION_REPEATS ?? 20);

interface Operation {
  key: string;
  label: string;
  /** Tool calls making up one operation, in order. */
  steps: { tool: string; args: Record<string, unknown> }[];
  repeats?: number;
}

export const PAGE_HTML = `<!doctype html><html><head><title>agentbox bench</title></head><body>
<h1>Benchmark page</h1><p>A local page with a few elements for the accessibility snapshot.</p>
<nav><a href="/a">First link</a> <a href="/b">Second link</a></nav>
<form><label>Name <input name="name"></label><button type="submit">Send</button></form>
<ul>${Array.from({ length: 20 }, (_, i) => `<li>Item ${i + 1}</li>`).join("")}</ul></body></html>`;

/**
 * A loopback page for the browser: the bench talks to nothing but 127.0.0.1. On a port every
 * tenant may connect to (outside the ephemeral range and the tenants' blocks): a hub with several
 * tenants refuses their connections to an ephemeral port (hub/tenants/network.ts).
 */
export async function servePage(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(PAGE_HTML);
  });
  const port = await listenForTenants(server);
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The files the operations read and convert, written into the hub's workspace. */
async function writeFixtures(workspace: string): Promise<void> {
  const line = "The quick brown fox jumps over the lazy dog. 0123456789 abcdefghij\n";
  fs.writeFileSync(path.join(workspace, "bench-1k.txt"), line.repeat(Math.ceil(1024 / line.length)).slice(0, 1024));
  fs.writeFileSync(path.join(workspace, "bench-1m.bin"), crypto.randomBytes(1024 * 1024));
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (let p = 1; p <= 3; p++) {
    const page = pdf.addPage();
    page.drawText(`Benchmark document, page ${p}`, { x: 50, y: 780, size: 18, font });
    for (let i = 0; i < 30; i++) page.drawText(`Line ${i + 1}: ${line.trim()}`, { x: 50, y: 740 - i * 22, size: 11, font });
  }
  fs.writeFileSync(path.join(workspace, "bench.pdf"), await pdf.save());
}

function operations(pageUrl: string): Operation[] {
  return [
    { key: "file_read_1k", label: "file_read 1 KB", steps: [{ tool: "file_read", args: { path: "bench-1k.txt" } }] },
    { key: "file_read_1m", label: "file_read 1 MB (base64)", steps: [{ tool: "file_read", args: { path: "bench-1m.bin", encoding: "base64" } }] },
    { key: "terminal_exec_true", label: "terminal_exec true", steps: [{ tool: "terminal_exec", args: { command: "true" } }] },
    {
      key: "browser_navigate_snapshot",
      label: "browser_navigate + browser_snapshot (local page)",
      steps: [
        { tool: "browser_navigate", args: { url: pageUrl } },
        { tool: "browser_snapshot", args: {} },
      ],
      repeats: Math.max(5, Math.round(REPEATS / 2)),
    },
    { key: "markitdown_convert_pdf", label: "markitdown_convert PDF (3 pages)", steps: [{ tool: "markitdown_convert", args: { source: "bench.pdf" } }] },
    { key: "code_execute_python", label: "code_execute 1+1 (python)", steps: [{ tool: "code_execute", args: { language: "python", code: "1+1" } }] },
    {
      key: "code_execute_javascript",
      label: "code_execute 1+1 (javascript)",
      steps: [{ tool: "code_execute", args: { language: "javascript", code: "1+1" } }],
    },
  ];
}

export async function runOperations(log: (msg: string) => void): Promise<Record<string, unknown>> {
  const workspace = tempDir("agentbox-bench-ops-");
  await writeFixtures(workspace);
  const page = await servePage();
  const { hub, servers, missing } = await startBuiltinHub({ workspace });
  let conn: Connection | undefined;
  try {
    conn = await connectHttp(hub.url);
    const client = conn.client;
    const published = new Set((await client.listTools()).tools.map((t) => t.name));
    const results: Record<string, unknown> = {};
    for (const op of operations(page.url)) {
      const absent = op.steps.map((s) => s.tool).filter((t) => !published.has(t));
      if (absent.length) {
        results[op.key] = { label: op.label, status: "missing", reason: `not in tools/list: ${absent.join(", ")}` };
        log(`operations ${op.key}: missing (${absent.join(", ")})`);
        continue;
      }
      const run = async () => {
        for (const step of op.steps) await callOk(client, step.tool, step.args);
      };
      try {
        const t0 = performance.now();
        await run(); // the first call pays for launches; reported apart from the warm figures
        const firstMs = performance.now() - t0;
        for (let i = 1; i < WARMUP; i++) await run();
        const measured = await sequential(run, op.repeats ?? REPEATS);
        if (measured.errors) throw new Error(measured.firstError);
        const summary = roundSummary(summarize(measured.latencies));
        results[op.key] = { label: op.label, status: "ok", firstCallMs: Math.round(firstMs), latencyMs: summary };
        log(`operations ${op.key}: p50 ${summary.p50} ms (first ${firstMs.toFixed(0)} ms)`);
      } catch (err) {
        results[op.key] = { label: op.label, status: "failing", reason: errorMessage(err).slice(0, 400) };
        log(`operations ${op.key}: failing (${errorMessage(err).slice(0, 120)})`);
      }
    }
    const result = {
      method: `one client session through the hub; per operation ${WARMUP} warm-up runs (the first timed apart as firstCallMs), then ${REPEATS} sequential runs (browser: half); latency from the client`,
      servers,
      missing,
      operations: results,
    };
    writeResult("operations", result);
    return result;
  } finally {
    await conn?.close();
    await hub.stop();
    await page.close();
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}
