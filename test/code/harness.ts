// Shared bits of the code server tests: a hub running the code server with its own data dir,
// and a short way to run a cell.
import assert from "node:assert/strict";
import fs from "node:fs";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { call, startHub, tempDir, textOf, type TestHub } from "../helpers/hub.js";

export { call, textOf };

export interface CodeHub extends TestHub {
  dataDir: string;
}

export async function startCodeHub(servers: string[] = ["code"], env: Record<string, string> = {}): Promise<CodeHub> {
  const dataDir = tempDir("agentbox-code-data-");
  // a short grace keeps the kill-and-restart tests quick; behaviour is the same
  const hub = await startHub({ servers, env: { AGENTBOX_CODE_DATA_DIR: dataDir, AGENTBOX_CODE_INTERRUPT_GRACE_MS: "700", ...env } });
  const stop = hub.stop.bind(hub);
  return Object.assign(hub, {
    dataDir,
    async stop() {
      await stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  });
}

/** A code hub and one client connected to it, for a suite's before(). */
export async function openCodeHub(servers?: string[], env?: Record<string, string>): Promise<{ hub: CodeHub; client: Client }> {
  const hub = await startCodeHub(servers, env);
  return { hub, client: await hub.connect() };
}

export interface Structured {
  status: string;
  stdout: string;
  stderr: string;
  result: string | null;
  error: string | null;
  images: number;
  stateKept: boolean;
  outputCut: boolean;
  note?: string;
  /** Only in a success's structuredContent. */
  session?: string;
}

export async function run(
  client: Client,
  language: "python" | "javascript",
  code: string,
  extra: Record<string, unknown> = {},
): Promise<{ result: CallToolResult; text: string; data: Structured }> {
  const result = await call(client, "code_execute", { language, code, ...extra });
  const text = textOf(result);
  if (!result.isError) return { result, text, data: result.structuredContent as unknown as Structured };
  // a failed cell keeps its data as structuredContent (the SDK client has checked it against the
  // outputSchema); the tests read its facts back from the text, as a model does, so they check that
  // the text has them too
  const data = failureFromText(text);
  assert.equal((result.structuredContent as { status?: string } | undefined)?.status, data.status, "a failed cell carries its data as structuredContent");
  return { result, text, data };
}

/** The labelled parts of a failed cell's text ("[status]\ntimeout; ...\n[error]\n..."). */
function failureFromText(text: string): Structured {
  const parts = new Map<string, string>();
  const heads = [...text.matchAll(/^\[(status|stdout|stderr|error|result|figures|note)\]\n/gm)];
  heads.forEach((head, i) => parts.set(head[1], text.slice(head.index! + head[0].length, heads[i + 1]?.index ?? text.length).replace(/\n$/, "")));
  const status = parts.get("status");
  assert.ok(status, `a failed cell's text starts with its [status]:\n${text}`);
  return {
    status: status.split(";")[0],
    stateKept: /state was kept/.test(status),
    stdout: parts.get("stdout") ?? "",
    stderr: parts.get("stderr") ?? "",
    result: parts.get("result") ?? null,
    error: parts.get("error") ?? null,
    note: parts.get("note"),
    images: Number(parts.get("figures")?.match(/^\d+/)?.[0] ?? 0),
    outputCut: /characters omitted/.test(text),
  };
}
