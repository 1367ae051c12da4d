// Workspace files as MCP resources: file:///<path relative to the workspace>, listed (bounded)
// and read as text, or as a base64 blob for binaries.
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { McpError, ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../lib/log.js";
import { toolName } from "../lib/names.js";
import { ToolError } from "../lib/tool.js";
import { resolveInWorkspace, isInside, relativeToWorkspace, type ResolveOptions } from "../lib/workspace.js";
import { openVerified } from "../lib/safe-fs.js";
import { mimeTypeOf } from "../lib/mime.js";
import { kindOf, readAt } from "./content.js";
import { reservedRoot } from "./paths.js";
import { walk } from "./walk.js";

const MAX_LISTED = 1000;
const MAX_RESOURCE_BYTES = 10 * 1024 * 1024;

export function uriFor(relative: string): string {
  return "file:///" + relative.split("/").map(encodeURIComponent).join("/");
}

export function registerResources(server: McpServer, env: { workspace: string; log: Logger }): void {
  const { workspace } = env;
  const template = new ResourceTemplate("file:///{+path}", {
    async list() {
      const resources = [];
      for await (const e of walk(workspace, { workspace })) {
        if (e.type !== "file") continue;
        resources.push({ uri: uriFor(e.relative), name: e.relative, mimeType: mimeTypeOf(e.name) });
        if (resources.length >= MAX_LISTED) break;
      }
      return { resources };
    },
  });
  server.registerResource(
    "workspace-file",
    template,
    { title: "Workspace file", description: `Files in the agentbox workspace (the first ${MAX_LISTED} are listed).` },
    async (uri, variables) => {
      const raw = Array.isArray(variables.path) ? variables.path.join("/") : String(variables.path ?? "");
      const file = resolveResource(workspace, raw);
      // read only through a descriptor proven to be inside the workspace (not hard-linked, not in .agentbox)
      const opened = await openVerified(workspace, file, raw).catch(protocolError);
      try {
        if (isInside(reservedRoot(workspace), opened.where)) throw new McpError(ErrorCode.InvalidParams, `'${raw}' is agentbox's private folder.`);
        const st = opened.stat;
        if (!st.isFile()) throw new McpError(ErrorCode.InvalidParams, `Resource ${uri.href} is not a regular file.`);
        if (st.size > MAX_RESOURCE_BYTES) {
          throw new McpError(
            ErrorCode.InvalidParams,
            `Resource ${uri.href} is ${st.size} bytes, over the ${MAX_RESOURCE_BYTES}-byte limit; use ${toolName("read")} in pages.`,
          );
        }
        const data = await readAt(opened.handle, st.size);
        const kind = await kindOf(file, data);
        const mimeType = mimeTypeOf(file, kind === "text");
        const href = uriFor(relativeToWorkspace(workspace, file));
        return kind === "text"
          ? { contents: [{ uri: href, mimeType, text: data.toString("utf8") }] }
          : { contents: [{ uri: href, mimeType, blob: data.toString("base64") }] };
      } finally {
        await opened.handle.close();
      }
    },
  );
}

/** The URI's path goes through the same guard as every tool path; refusals become protocol errors. */
export function resolveResource(workspace: string, encoded: string, options: ResolveOptions = {}): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(encoded);
  } catch {
    throw new McpError(ErrorCode.InvalidParams, `Malformed resource path '${encoded}'.`);
  }
  try {
    const file = resolveInWorkspace(workspace, decoded, options);
    if (isInside(reservedRoot(workspace), file)) throw new ToolError(`'${decoded}' is agentbox's private folder.`);
    return file;
  } catch (err) {
    return protocolError(err);
  }
}

/** Refusals from the guard become protocol errors (a resource read has no isError result). */
export function protocolError(err: unknown): never {
  if (err instanceof ToolError) throw new McpError(ErrorCode.InvalidParams, err.message);
  throw err;
}
