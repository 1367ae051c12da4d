// What a tool publishes about its arguments, and what a caller hears when it gets them wrong.
// The SDK would publish zod's JSON Schema as is, with a "$schema" on every schema and
// ±9007199254740991 bounds on every integer: about 1,800 tokens of nothing per tools/list that a
// model reads on every turn. And its argument errors name the tool by its unprefixed name, which
// the model cannot call. Both are done here instead.
import { z, type ZodRawShape } from "zod";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * A copy of a JSON Schema without what carries no meaning for a caller: the "$schema" dialect
 * tag, the safe-integer bounds zod puts on every `.int()` (a bound the tool set itself stays), and
 * defaults that say what leaving the argument out means anyway: `false` for a flag, and 0 for a
 * count from 0 (offset), and the `type: "string"` zod gives `propertyNames` (a property name is
 * one anyway). Some twenty-five flags and twenty offsets, each read by a model on every turn.
 */
export function withoutSchemaNoise<T>(schema: T): T {
  return strip(schema as Json, true, false) as T;
}

/** Keywords whose value maps names (of properties, of definitions) to schemas: its keys are no keywords. */
const NAME_MAPS = new Set(["properties", "patternProperties", "definitions", "$defs"]);

/** `names`: the node is such a map. */
function strip(node: Json, root: boolean, names: boolean): Json {
  if (Array.isArray(node)) return node.map((item) => strip(item, false, false));
  if (node === null || typeof node !== "object") return node;
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) {
    if (names) {
      out[key] = strip(value, false, false);
      continue;
    }
    if (root && key === "$schema") continue;
    // only the keyword with exactly zod's default value: a property *named* "maximum" holds a schema
    if (key === "maximum" && value === Number.MAX_SAFE_INTEGER) continue;
    if (key === "minimum" && value === Number.MIN_SAFE_INTEGER) continue;
    if (key === "default" && impliedDefault(node, value)) continue;
    if (key === "propertyNames" && isStringSchema(value)) {
      const { type: _string, ...rest } = value;
      out[key] = strip(rest, false, false);
      continue;
    }
    out[key] = strip(value, false, NAME_MAPS.has(key));
  }
  return out;
}

function isStringSchema(value: Json): value is { [key: string]: Json } {
  return value !== null && typeof value === "object" && !Array.isArray(value) && value.type === "string";
}

/** Whether a schema's default is what a caller assumes of an argument left out: a flag off, a count from 0 at 0. */
function impliedDefault(schema: { [key: string]: Json }, value: Json): boolean {
  if (schema.type === "boolean") return value === false;
  return schema.type === "integer" && schema.minimum === 0 && value === 0;
}

/** The JSON Schema a tool publishes for its input (what a caller may send) or output (what it returns). */
export function publishedSchema(shape: ZodRawShape, io: "input" | "output"): { type: "object"; [key: string]: unknown } {
  return withoutSchemaNoise(z.toJSONSchema(z.object(shape), { target: "draft-7", io })) as { type: "object" };
}

/** What a tool's `run` receives: its input after parsing (defaults filled in, unknown names refused). */
export type Arguments<S extends ZodRawShape> = z.output<z.ZodObject<S, z.core.$strict>>;

export type ParsedArguments<S extends ZodRawShape> = { ok: true; args: Arguments<S> } | { ok: false; message: string };

/**
 * Each tool's input as one strict object schema, built on its first call and kept: zod compiles an
 * object schema when it first parses with it, and a schema built per call made the echo fixture's
 * call cost 99 µs of CPU instead of 40 (bench/README.md, table 16).
 */
const strictSchemas = new WeakMap<ZodRawShape, z.ZodObject<ZodRawShape, z.core.$strict>>();

function strictSchemaOf<S extends ZodRawShape>(shape: S): z.ZodObject<S, z.core.$strict> {
  let schema = strictSchemas.get(shape);
  if (!schema) strictSchemas.set(shape, (schema = z.object(shape).strict()));
  return schema as z.ZodObject<S, z.core.$strict>;
}

/**
 * Validates a call's arguments against a tool's input. Unknown argument names are refused rather
 * than silently dropped: a misspelt `ofset` would otherwise read from the start without a word.
 * The message names the published tool, says what was wrong, and lists what is allowed.
 */
export function parseArguments<S extends ZodRawShape>(published: string, shape: S, args: unknown): ParsedArguments<S> {
  const result = strictSchemaOf(shape).safeParse(args ?? {});
  if (result.success) return { ok: true, args: result.data };
  const problems = result.error.issues.map((issue) => `- ${describeIssue(issue, args)}`);
  return { ok: false, message: `Invalid arguments for ${published}:\n${problems.join("\n")}\n${allowedArguments(shape)}` };
}

function describeIssue(issue: z.core.$ZodIssue, args: unknown): string {
  if (issue.code === "unrecognized_keys") {
    const where = issue.path.length ? ` in ${issue.path.join(".")}` : "";
    return `unknown argument${issue.keys.length > 1 ? "s" : ""}${where}: ${issue.keys.join(", ")}`;
  }
  const path = issue.path.map(String).join(".");
  if (issue.path.length && valueAt(args, issue.path) === undefined) {
    return `${path}: required (${issue.code === "invalid_type" ? `expected ${issue.expected}` : issue.message})`;
  }
  return `${path || "arguments"}: ${issue.message}`;
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  return path.reduce<unknown>((at, key) => (at !== null && typeof at === "object" ? (at as Record<PropertyKey, unknown>)[key] : undefined), value);
}

function allowedArguments(shape: ZodRawShape): string {
  const names = Object.entries(shape).map(([name, schema]) => (z.safeParse(schema, undefined).success ? name : `${name} (required)`));
  return names.length ? `Allowed arguments: ${names.join(", ")}.` : "This tool takes no arguments.";
}
