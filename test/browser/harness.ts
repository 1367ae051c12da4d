// Shared by the browser tests: a hub running only the browser server, the local test site, and
// helpers to call browser_* tools and pick refs out of snapshots.
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { call, startHub, textOf, type TestHub } from "../helpers/hub.js";
import { startSite, type Site } from "../fixtures/browser/site.js";

export { textOf };

export interface Harness {
  hub: TestHub;
  site: Site;
  workspace: string;
  stop(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const site = await startSite();
  const hub = await startHub({ servers: ["browser"] });
  return {
    hub,
    site,
    workspace: hub.workspace,
    async stop() {
      await hub.stop();
      await site.close();
    },
  };
}

/** Call browser_<tool>; fails the test when the tool reports an error. */
export async function ok(client: Client, tool: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  const result = await call(client, `browser_${tool}`, args);
  assert.ok(!result.isError, `browser_${tool} failed: ${textOf(result)}`);
  return result;
}

/** Call browser_<tool> expecting an error result; returns its text. */
export async function fails(client: Client, tool: string, args: Record<string, unknown> = {}): Promise<string> {
  const result = await call(client, `browser_${tool}`, args);
  assert.equal(result.isError, true, `browser_${tool} should have failed: ${textOf(result)}`);
  return textOf(result);
}

/** The ref of the first snapshot line containing `needle`, e.g. refOf(text, 'button "Send"'). */
export function refOf(snapshot: string, needle: string): string {
  const line = snapshot.split("\n").find((l) => l.includes(needle) && /\[ref=/.test(l));
  assert.ok(line, `no element with ${needle} in snapshot:\n${snapshot}`);
  return line.match(/\[ref=([^\]]+)\]/)![1];
}

/** Evaluate an expression in the current tab and return its structured result. */
export async function evaluate(client: Client, code: string): Promise<unknown> {
  const result = await ok(client, "evaluate", { code });
  return (result.structuredContent as { result: unknown }).result;
}
