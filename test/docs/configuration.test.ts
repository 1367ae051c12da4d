// docs/configuration.md names every setting the code reads, in its tables: each environment
// variable under hub/ and servers/ (AGENTBOX_*, ARXIV_*, MARKITDOWN_*, OTEL_*) and the container's
// entry point, and every key of the config file's schema (hub/config/schema.ts), the keys of
// server entries, tenants, limits, network and rate limits included. A setting added to the code
// and not to the page fails here, naming it.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import type { z } from "zod";
import { fileSchema } from "../../hub/config/schema.js";
import { filesUnder, root } from "./project.js";

const PAGE = "docs/configuration.md";
const page = fs.readFileSync(path.join(root, PAGE), "utf8");

/** The words inside code spans of the page's table rows: where a setting is given its line. */
const tabled = new Set(
  page
    .split("\n")
    .filter((line) => line.startsWith("|"))
    .flatMap((line) => [...line.matchAll(/`([^`]+)`/g)].flatMap((m) => m[1].match(/[A-Za-z0-9_]+/g) ?? [])),
);

const VARIABLE = /\b(?:AGENTBOX|ARXIV|MARKITDOWN|OTEL)_[A-Z0-9_]+\b/g;

/** Every such variable the product's code names (test/ and bench/ have their own, which configure nothing). */
function variablesInCode(): Map<string, string> {
  const found = new Map<string, string>();
  const files = [...filesUnder("hub"), ...filesUnder("servers"), "docker/entrypoint.sh"].filter((f) => /\.(ts|mjs|js|py|c|sh)$/.test(f));
  for (const file of files) {
    for (const match of fs.readFileSync(path.join(root, file), "utf8").matchAll(VARIABLE)) {
      // a family named by its prefix (AGENTBOX_CHILD_*) is no variable of its own
      if (!match[0].endsWith("_") && !found.has(match[0])) found.set(match[0], file);
    }
  }
  return found;
}

type Schema = z.core.$ZodType;

/** Every key of a schema, as dotted paths (`mcpServers.<name>.timeoutMs`), through optional, record, union and object. */
function keysOf(schema: Schema, at = ""): string[] {
  const def = schema._zod.def as unknown as { type: string; innerType?: Schema; valueType?: Schema; options?: Schema[]; shape?: Record<string, Schema> };
  switch (def.type) {
    case "optional":
    case "nullable":
    case "default":
      return keysOf(def.innerType!, at);
    case "record":
      return keysOf(def.valueType!, `${at}.<name>`);
    case "union":
      return def.options!.flatMap((option) => keysOf(option, at));
    case "object":
      return Object.entries(def.shape!).flatMap(([key, value]) => {
        const here = at ? `${at}.${key}` : key;
        return [here, ...keysOf(value, here)];
      });
    default:
      return [];
  }
}

describe(PAGE, () => {
  test("names every environment variable the code reads, in a table", () => {
    const variables = variablesInCode();
    assert.ok(variables.size > 80, `only ${variables.size} variables found in the code`);
    const missing = [...variables].filter(([name]) => !tabled.has(name)).map(([name, file]) => `  ${name} (read in ${file})`);
    assert.deepEqual(missing, [], `${PAGE} has no table row for:\n${missing.join("\n")}`);
  });

  test("names every key of the config file, in a table", () => {
    const keys = keysOf(fileSchema as unknown as Schema);
    for (const key of [
      "port",
      "mcpServers.<name>.timeoutMs",
      "tenants.<name>.apiKey",
      "network.portsPerTenant",
      "rateLimits.methods",
      "mcpServers.<name>.tools.deny",
    ]) {
      assert.ok(keys.includes(key), `the schema walk found no ${key}: ${keys.join(", ")}`);
    }
    const missing = keys.filter((key) => !tabled.has(key.slice(key.lastIndexOf(".") + 1)));
    assert.deepEqual(missing, [], `${PAGE} has no table row naming:\n${missing.map((k) => `  ${k}`).join("\n")}`);
  });

  test("a variable missing from the page would be found", () => {
    assert.equal(tabled.has("AGENTBOX_PORT"), true);
    assert.equal(tabled.has("AGENTBOX_NO_SUCH_SETTING"), false);
  });
});
