// markitdown `formats`: what `convert` understands.
import { z } from "zod";
import { defineTool, reply } from "../../lib/tool.js";
import { toolName } from "../../lib/names.js";
import { FORMATS } from "../../lib/document-formats.js";

const formats = defineTool({
  name: "formats",
  title: "List convertible formats",
  description: () => `The formats ${toolName("convert")} understands, with file extensions and media types.`,
  input: {},
  output: {
    formats: z.array(
      z.object({ id: z.string(), label: z.string(), extensions: z.array(z.string()), mimeTypes: z.array(z.string()), note: z.string().optional() }),
    ),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run() {
    const list = FORMATS.map(({ engine: _engine, ...f }) => f);
    const lines = list.map((f) => `- ${f.label} (${f.id}): ${f.extensions.join(", ")}${f.note ? ` — ${f.note}` : ""}`);
    const sources = "Sources: workspace path, file: URI, http(s): URL, data: URI, or base64 content + file name.";
    return reply.data(`${lines.join("\n")}\n\n${sources}`, { formats: list });
  },
});

export default [formats];
