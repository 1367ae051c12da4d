// Bundles the live view's page for the browser (`npm run build`, after tsc): its TypeScript with
// xterm.js in one script, and its styles with xterm's, so the hub serves everything itself.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { BROWSER_BUNDLE } from "../playground/browser-bundle.js";
import { STATIC_DIR } from "./page.js";

// this file runs from dist/hub/live/; its sources are in hub/live/
const here = path.dirname(fileURLToPath(import.meta.url));
const source = path.resolve(here, "..", "..", "..", "hub", "live", "web");

fs.mkdirSync(STATIC_DIR, { recursive: true });
await build({
  entryPoints: [
    { in: path.join(source, "view.ts"), out: "view" },
    { in: path.join(source, "view.css"), out: "view" },
  ],
  outdir: STATIC_DIR,
  ...BROWSER_BUNDLE,
  format: "esm",
});
fs.copyFileSync(path.join(source, "view.html"), path.join(STATIC_DIR, "view.html"));
process.stderr.write(`live view built into ${STATIC_DIR}\n`);
