// What a tool publishes about its input, and what a caller hears when its arguments are wrong.
import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";
import { parseArguments, publishedSchema, withoutSchemaNoise } from "../../servers/lib/tool-schema.js";

const shape = {
  path: z.string().describe("File path."),
  offset: z.number().int().min(1).optional(),
  count: z.number().int(),
  items: z.array(z.object({ n: z.number().int().max(10) })).optional(),
  mode: z.enum(["a", "b"]).default("a"),
};

test("published schemas carry no $schema and no safe-integer bounds, but keep the bounds a tool set", () => {
  for (const io of ["input", "output"] as const) {
    const schema = publishedSchema(shape, io);
    const json = JSON.stringify(schema);
    assert.equal(schema.type, "object");
    assert.ok(!json.includes("$schema"), json);
    assert.ok(!json.includes(String(Number.MAX_SAFE_INTEGER)) && !json.includes(String(Number.MIN_SAFE_INTEGER)), json);
    const props = schema.properties as Record<string, Record<string, unknown>>;
    assert.equal(props.offset.minimum, 1);
    assert.equal(props.count.type, "integer");
    assert.equal((props.items as { items: { properties: { n: { maximum: number } } } }).items.properties.n.maximum, 10);
    assert.equal(props.path.description, "File path.");
  }
});

test("the clean-up removes only the keywords, never a property that happens to be called maximum", () => {
  const schema = {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { maximum: { type: "integer", minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }, minimum: { type: "number", minimum: 0 } },
  };
  assert.deepEqual(withoutSchemaNoise(schema), {
    type: "object",
    properties: { maximum: { type: "integer" }, minimum: { type: "number", minimum: 0 } },
  });
});

test("propertyNames keeps its pattern but not the type every property name has; a property named propertyNames keeps its own", () => {
  const schema = publishedSchema(
    {
      env: z.record(z.string().regex(/^[A-Z]+$/), z.string()),
      propertyNames: z.string(),
    },
    "input",
  );
  const props = schema.properties as Record<string, Record<string, unknown>>;
  assert.deepEqual(props.env.propertyNames, { pattern: "^[A-Z]+$" });
  assert.equal(props.propertyNames.type, "string");
});

test("a default that leaving the argument out means anyway is not published: a flag off, a count from 0 at 0; other defaults stay", () => {
  const schema = publishedSchema(
    {
      hidden: z.boolean().default(false),
      strip: z.boolean().default(true),
      offset: z.number().int().min(0).default(0),
      depth: z.number().int().min(1).default(1),
      delta: z.number().default(0),
      exclude: z.array(z.string()).default([]),
    },
    "input",
  );
  const props = schema.properties as Record<string, Record<string, unknown>>;
  assert.equal("default" in props.hidden, false);
  assert.equal("default" in props.offset, false);
  assert.equal(props.strip.default, true);
  assert.equal(props.depth.default, 1, "a count from 1 might be read as 'all'");
  assert.equal(props.delta.default, 0, "a number without a floor has no obvious default");
  assert.deepEqual(props.exclude.default, []);
  // the argument is still filled in when parsed
  assert.deepEqual(parseArguments("file_list", { hidden: z.boolean().default(false) }, {}), { ok: true, args: { hidden: false } });
});

test("valid arguments come back parsed, with defaults applied", () => {
  assert.deepEqual(parseArguments("file_read", shape, { path: "a", count: 2 }), { ok: true, args: { path: "a", count: 2, mode: "a" } });
});

test("an argument error names the published tool, says what was wrong and what is allowed", () => {
  const result = parseArguments("file_read", shape, { offset: 0, count: 1.5, mode: "c" });
  assert.equal(result.ok, false);
  const message = (result as { message: string }).message;
  assert.match(message, /^Invalid arguments for file_read:\n/);
  assert.match(message, /- path: required \(expected string\)/);
  assert.match(message, /- offset: .*>=1/);
  assert.match(message, /- count: /);
  assert.match(message, /- mode: .*"a"\|"b"/);
  assert.match(message, /Allowed arguments: path \(required\), offset, count \(required\), items, mode\.$/);
});

test("unknown arguments are refused, not silently dropped", () => {
  const result = parseArguments("file_read", shape, { path: "a", count: 1, ofset: 3 });
  assert.equal(result.ok, false);
  assert.match((result as { message: string }).message, /- unknown argument: ofset/);
});

test("a tool without arguments says so", () => {
  const result = parseArguments("file_snapshot_list", {}, { x: 1 });
  assert.match((result as { message: string }).message, /unknown argument: x\nThis tool takes no arguments\.$/);
});

test("each tool's input is checked against its own schema, call after call", () => {
  // the strict schema is built once per input and kept: a second input with the same names must not get the first's
  const counted = { n: z.number().int().default(1) };
  const named = { n: z.string() };
  for (let call = 0; call < 3; call++) {
    assert.deepEqual(parseArguments("a_count", counted, {}), { ok: true, args: { n: 1 } });
    assert.deepEqual(parseArguments("b_name", named, { n: "x" }), { ok: true, args: { n: "x" } });
    assert.match((parseArguments("a_count", counted, { n: "x" }) as { message: string }).message, /^Invalid arguments for a_count:\n- n: /);
    assert.match((parseArguments("b_name", named, { n: 1, m: 2 }) as { message: string }).message, /unknown argument: m/);
  }
});
