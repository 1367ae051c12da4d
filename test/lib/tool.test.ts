// defineTool: a tool's run sees its arguments as its own input parses them, and nothing else
// reaches it; bad arguments are answered with the published name before run is called.
import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";
import { configureToolNames } from "../../servers/lib/names.js";
import { defineTool, reply, type ToolContext } from "../../servers/lib/tool.js";

// run never touches the context here; the tools that need one are tested through a real hub
const ctx = {} as ToolContext;

const seen: unknown[] = [];
const tool = defineTool({
  name: "count",
  title: "Count",
  description: "Counts.",
  input: { word: z.string(), times: z.number().int().min(1).default(2) },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run({ word, times }) {
    seen.push({ word, times });
    return reply.text(word.repeat(times));
  },
});

// the compiler checks run against input: an argument the input does not have is an error
defineTool({
  name: "typed",
  title: "Typed",
  description: "Checked by tsc.",
  input: { word: z.string() },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  // @ts-expect-error `times` is not part of this tool's input
  run: ({ word, times }: { word: string; times: number }) => reply.text(word.repeat(times)),
});

// every tool states all four annotation hints: one left out is a compile error, not the
// spec's default (destructive, open-world) silently published
defineTool({
  name: "unhinted",
  title: "Unhinted",
  description: "Checked by tsc.",
  input: {},
  // @ts-expect-error destructiveHint is missing
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: () => reply.text("never run"),
});

defineTool({
  name: "titled",
  title: "Titled",
  description: "Checked by tsc.",
  input: {},
  // @ts-expect-error the title lives on the tool, never in its annotations
  annotations: { title: "Titled", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: () => reply.text("never run"),
});

test("call parses the raw arguments with the tool's own input, defaults included", async () => {
  configureToolNames("demo", ["count"], {});
  seen.length = 0;
  const result = await tool.call({ word: "ab" }, ctx);
  assert.deepEqual(result, { content: [{ type: "text", text: "abab" }] });
  assert.deepEqual(seen, [{ word: "ab", times: 2 }]);
});

test("hostile or mistaken arguments never reach run: wrong types, unknown names, no object at all", async () => {
  configureToolNames("demo", ["count"], {});
  seen.length = 0;
  for (const raw of [{ word: 5 }, { word: "a", times: 0 }, { word: "a", tiems: 3 }, JSON.parse('{"word":"a","__proto__":{"times":9}}'), "word", [1], null]) {
    const result = await tool.call(raw, ctx);
    assert.equal(result.isError, true, JSON.stringify(raw));
    assert.match((result.content[0] as { text: string }).text, /^Invalid arguments for demo_count:/);
  }
  const none = await tool.call(undefined, ctx);
  assert.equal(none.isError, true);
  assert.match((none.content[0] as { text: string }).text, /word: required/);
  assert.deepEqual(seen, []);
});
