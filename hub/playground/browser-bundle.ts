// The esbuild options every page the hub serves is bundled with (the playground, the live view and
// its MCP App): one script for today's browsers, minified, nothing fetched at run time. Each build
// adds its entry points, output and module format.
import type { BuildOptions } from "esbuild";

export const BROWSER_BUNDLE = {
  bundle: true,
  platform: "browser",
  target: "es2022",
  minify: true,
  sourcemap: false,
  legalComments: "none",
  logLevel: "warning",
} satisfies BuildOptions;
