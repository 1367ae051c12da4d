// code_install: pip / npm install for the code sessions.
import { defineTool, reply, ToolError } from "../../lib/tool.js";
import { z } from "zod";
import type { CodeConfig } from "../config.js";
import { install } from "../install.js";
import { languageSchema } from "./execute.js";

export function installTool(config: CodeConfig) {
  return defineTool({
    name: "install",
    title: "Install packages",
    description:
      "Install packages for code sessions: `pip install` into the Python environment (a venv that also sees the system packages) or " +
      "`npm install` into the JavaScript one, from the configured package indexes. Each spec is a package name (with extras, " +
      "version, range, tag or marker), an https or git+https URL, or a folder or archive inside the workspace (./mypkg, " +
      "dist/pkg-1.0.tgz, file:./mypkg); options (anything starting with '-') and local paths outside the workspace are refused. New Python packages are importable in running sessions at once; a package " +
      "that was already imported needs code_reset to load the new version.",
    input: {
      language: languageSchema,
      packages: z
        .array(z.string().min(1))
        .min(1)
        .max(50)
        .describe("Package specs: names with optional versions (requests==2.32.0, lodash@4), https URLs, or workspace paths to a folder or archive."),
    },
    output: { language: z.enum(["python", "javascript"]), packages: z.array(z.string()), command: z.string(), output: z.string() },
    annotations: { destructiveHint: false, idempotentHint: true, readOnlyHint: false, openWorldHint: true },
    async run({ language, packages }, ctx) {
      const result = await install(config, { language, packages, workspace: ctx.workspace, signal: ctx.signal });
      if (result.code !== 0) {
        throw new ToolError(`${result.command} failed (exit code ${result.code}):\n${result.output.trim()}`);
      }
      const text = `Installed ${packages.join(", ")} for ${language}.\n${result.output.trim()}`;
      return reply.data(text, { language, packages, command: result.command, output: result.output });
    },
  });
}
