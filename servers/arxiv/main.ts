// The arxiv child server: search and fetch arXiv papers (published as arxiv_*).
import { serve } from "../lib/serve.js";
import { libraryTools } from "./library.js";
import { metadataTools } from "./tools.js";
import { toolName } from "../lib/names.js";

// pdf.js (used to turn downloaded PDFs into Markdown) prints with console.log; stdout is JSON-RPC.
console.log = console.info = console.debug = console.error;

await serve({
  name: "arxiv",
  instructions: () =>
    "Search arXiv, get paper metadata, download papers into the workspace (papers/) as PDF + Markdown and read them page by page. " +
    `Requests to arXiv are spaced a few seconds apart, so batch ids in one ${toolName("get")} call.`,
  tools: [...metadataTools, ...libraryTools],
});
