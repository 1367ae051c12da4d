// Bundles the playground for the browser (`npm run build:playground`, after tsc): the page's
// TypeScript with the MCP SDK client, marked and DOMPurify in one file, so the hub serves
// everything itself and nothing is fetched from a CDN at run time.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
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
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  sourcemap: false,
  legalComments: "none",
  logLevel: "warning",
  // the SDK's optional Node paths (stdio, node:crypto fallbacks) are never reached in a browser
  define: { "process.env.NODE_ENV": '"production"' },
});
for (const file of ["index.html", "favicon.svg"]) fs.copyFileSync(path.join(source, "web", file), path.join(STATIC_DIR, file));
process.stderr.write(`playground built into ${STATIC_DIR}\n`);
