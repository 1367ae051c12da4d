// code_install: pip / npm install for the code sessions.
import { defineTool, reply, ToolError } from "../../lib/tool.js";
import { z } from "zod";
import { toolName } from "../../lib/names.js";
import { install } from "../install.js";
import { config } from "../state.js";
import { languageSchema } from "./execute.js";

const installPackages = defineTool({
  name: "install",
  title: "Install packages",
  description: () =>
    "Install packages for code sessions with pip (into a venv that sees the system packages) or npm. " +
    "A spec is a name (with extras, version, range, tag, marker), an https or git+https URL, or a workspace folder or archive " +
    "(./mypkg, file:./mypkg); options ('-…') are refused. " +
    `An already imported Python package needs ${toolName("reset")} to load the new version.`,
  input: {
    language: languageSchema,
    packages: z.array(z.string().min(1)).min(1).max(50).describe("Specs, e.g. requests==2.32.0, lodash@4"),
  },
  output: {
    language: z.enum(["python", "javascript"]),
    packages: z.array(z.string()),
    command: z.string(),
    exitCode: z.number().int().nullable().describe("pip's or npm's exit code: 0 when the packages were installed, null when killed by a signal."),
    output: z.string(),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  async run({ language, packages }, ctx) {
    const result = await install(config, { language, packages, workspace: ctx.workspace, signal: ctx.signal });
    const data = { language, packages, command: result.command, exitCode: result.code, output: result.output };
    if (result.code !== 0) {
      throw new ToolError(`${result.command} failed (exit code ${result.code}):\n${result.output.trim()}`, data);
    }
    return reply.data(`Installed ${packages.join(", ")} for ${language}.\n${result.output.trim()}`, data);
  },
});

export default [installPackages];
