// The markitdown child server: document → Markdown conversion (published as markitdown_*).
import { serve } from "../lib/serve.js";
import { tools } from "./tools.js";

// The converters' libraries (pdf.js, mammoth, jsdom) print diagnostics with console.log; in a
// stdio child stdout carries JSON-RPC, so every console channel goes to stderr.
console.log = console.info = console.debug = console.error;

await serve({
  name: "markitdown",
  instructions: "Convert documents (PDF, Word, Excel, HTML, CSV, JSON, ZIP…) from the workspace, a URL or inline content to Markdown.",
  tools,
});
