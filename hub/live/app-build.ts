// Bundles the live view's MCP App (`npm run build`, after tsc) into one document: an MCP App
// resource is a single HTML text, so its script (with the ext-apps SDK and xterm.js) and its styles
// are inlined, and the resource loads nothing else.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";
import { BROWSER_BUNDLE } from "../playground/browser-bundle.js";
import { LIVE_APP_FILE } from "./app-resource.js";
import { STATIC_DIR } from "./page.js";

// this file runs from dist/hub/live/; its sources are in hub/live/
const here = path.dirname(fileURLToPath(import.meta.url));
const source = path.resolve(here, "..", "..", "..", "hub", "live", "web");

/**
 * zod (which the SDK validates messages with) exports every language's error messages; the app
 * shows none of them, so only English (zod's default) is bundled: a quarter of the document.
 */
const englishOnly: Plugin = {
  name: "zod-english-only",
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${path.sep}zod${path.sep}`)
        ? { path: path.join(path.dirname(args.importer), "..", "locales", "en.js"), namespace: "zod-locales" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
      contents: `export { default as en } from "./en.js";`,
      resolveDir: path.dirname(args.path),
      loader: "js",
    }));
  },
};

const bundled = await build({
  plugins: [englishOnly],
  entryPoints: [path.join(source, "app.ts"), path.join(source, "app.css")],
  outdir: "out",
  write: false,
  ...BROWSER_BUNDLE,
  format: "iife",
});
const output = (ext: string) => bundled.outputFiles.find((f) => f.path.endsWith(ext))!.text;
// inlined text must not end its own element early
const script = output(".js").replace(/<\/script/gi, "<\\/script");
const style = output(".css").replace(/<\/style/gi, "<\\/style");
const template = fs.readFileSync(path.join(source, "app.html"), "utf8");
const html = template.replace("/* app.css */", () => style).replace("/* app.js */", () => script);
fs.mkdirSync(STATIC_DIR, { recursive: true });
fs.writeFileSync(LIVE_APP_FILE, html);
process.stderr.write(`live view app built into ${LIVE_APP_FILE} (${html.length} bytes)\n`);
