// Parameter pieces shared by exec and session_create.
import fs from "node:fs";
import { z } from "zod";
import { ToolError } from "../../lib/tool.js";
import { resolveInWorkspace } from "../../lib/workspace.js";

export const envSchema = z
  .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "environment variable names use letters, digits and _"), z.string())
  .describe("Extra environment variables");

/** The working directory: the workspace by default, else a directory inside it. */
export function resolveCwd(workspace: string, cwd: string | undefined): string {
  if (cwd === undefined || cwd === "") return workspace;
  const dir = resolveInWorkspace(workspace, cwd);
  if (!fs.statSync(dir).isDirectory()) throw new ToolError(`cwd '${cwd}' is not a directory.`);
  return dir;
}
