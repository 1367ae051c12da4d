// Bundles the playground for the browser (`npm run build:playground`, after tsc): the page's
// TypeScript with the MCP SDK v2 client, marked and DOMPurify in one file, so the hub serves
// everything itself and nothing is fetched from a CDN at run time.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { BROWSER_BUNDLE } from "./browser-bundle.js";
import { STATIC_DIR } from "./route.js";

// this file runs from dist/hub/playground/; its sources are in hub/playground/
const here = path.dirname(fileURLToPath(import.meta.url));
const source = path.resolve(here, "..", "..", "..", "hub", "playground");

fs.mkdirSync(STATIC_DIR, { recursive: true });
await build({
  entryPoints: [
    { in: path.join(source, "web", "main.ts"), out: "app" },
    { in: path.join(source, "web", "app.css"), out: "app" },
  ],
  outdir: STATIC_DIR,
  ...BROWSER_BUNDLE,
  format: "esm",
  // platform "browser" picks the SDK's browser shims (its JSON Schema validator without eval), and a
  // Node-only import anywhere fails the build instead of reaching the page
  define: { "process.env.NODE_ENV": '"production"' },
});
for (const file of ["index.html", "favicon.svg"]) fs.copyFileSync(path.join(source, "web", file), path.join(STATIC_DIR, file));
process.stderr.write(`playground built into ${STATIC_DIR}\n`);
