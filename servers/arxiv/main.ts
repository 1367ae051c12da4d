// The arxiv child server: search and fetch arXiv papers (published as arxiv_*).
import { serve } from "../lib/serve.js";
import { toolName } from "../lib/names.js";
import library from "./tools/library.js";
import metadata from "./tools/metadata.js";

await serve({
  name: "arxiv",
  instructions: () =>
    "Search arXiv, get paper metadata, download papers into the workspace (papers/) as PDF + Markdown and read them page by page. " +
    `Requests to arXiv are spaced a few seconds apart, so batch ids in one ${toolName("get")} call.`,
  tools: [...metadata, ...library],
});
