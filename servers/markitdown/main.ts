// The markitdown child server: document → Markdown conversion (published as markitdown_*).
import { serve } from "../lib/serve.js";
import convert from "./tools/convert.js";
import formats from "./tools/formats.js";

await serve({
  name: "markitdown",
  instructions: "Convert documents (PDF, Word, Excel, HTML, CSV, JSON, ZIP…) from the workspace, a URL or inline content to Markdown.",
  tools: [...convert, ...formats],
});
