// What the recording tests do as an agent: open and drive terminals, list recordings, read an asciicast.
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, textOf } from "../../helpers/hub.js";
import { until } from "../../helpers/wait.js";
import type { ListedRecording } from "../../../hub/tools/recordings-tool.js";

export type { ListedRecording };

export async function recordingsOf(client: Client): Promise<ListedRecording[]> {
  const result = await call(client, "hub_recordings", {});
  assert.ok(!result.isError, textOf(result));
  return (result.structuredContent as { recordings: ListedRecording[] }).recordings;
}

/** Run a command in a terminal and wait for `done` in its output. */
export async function run(client: Client, id: string, command: string, done: RegExp): Promise<string> {
  const sent = await call(client, "terminal_session_send", { id, input: `${command}\n`, waitFor: done.source, timeoutMs: 20_000 });
  assert.ok(!sent.isError, textOf(sent));
  return textOf(sent);
}

export async function openTerminal(client: Client, args: Record<string, unknown> = {}): Promise<{ id: string; recording?: string }> {
  const created = await call(client, "terminal_session_create", args);
  assert.ok(!created.isError, textOf(created));
  return created.structuredContent as { id: string; recording?: string };
}

/** A downloaded asciicast: its header and events. */
export function parseCast(text: string): { header: Record<string, unknown>; events: [number, string, string][] } {
  const [first, ...rest] = text.trimEnd().split("\n");
  return { header: JSON.parse(first!), events: rest.map((l) => JSON.parse(l)) };
}

/** Until the downloaded recording's output holds `pattern`. */
export function untilRecorded(url: string, pattern: RegExp): Promise<string> {
  return until(`the recording to hold ${pattern}`, async () => {
    const res = await fetch(url);
    const text = await res.text();
    if (res.status !== 200) return undefined;
    const output = parseCast(text)
      .events.filter((e) => e[1] === "o")
      .map((e) => e[2])
      .join("");
    return pattern.test(output) ? text : undefined;
  });
}
