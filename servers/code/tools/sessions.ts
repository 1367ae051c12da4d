// code_sessions: the code sessions of the calling client, with language, age and memory.
import { defineTool, reply } from "../../lib/tool.js";
import { z } from "zod";
import { sessions } from "../state.js";

const sessionInfo = z.object({
  name: z.string(),
  language: z.enum(["python", "javascript"]),
  pid: z.number().int().nullable(),
  busy: z.boolean(),
  executions: z.number().int(),
  ageSeconds: z.number(),
  idleSeconds: z.number(),
  interpreterAgeSeconds: z.number().nullable().describe("time since the current interpreter started (a reset or restart renews it)"),
  memoryBytes: z.number().nullable().describe("resident memory of the interpreter process"),
});

function megabytes(bytes: number | null): string {
  return bytes === null ? "?" : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

const listSessions = defineTool({
  name: "sessions",
  title: "List code sessions",
  description: "List this client's code sessions: name, language, age, idle time, memory, whether running code.",
  input: {},
  output: { sessions: z.array(sessionInfo) },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(_args, ctx) {
    const list = (await sessions.list(ctx.session)).map((k) => k.info());
    const text = list.length
      ? list
          .map(
            (s) =>
              `${s.language}:${s.name}  pid ${s.pid ?? "-"}  ${s.busy ? "busy" : "idle"}  age ${s.ageSeconds}s  idle ${s.idleSeconds}s  ` +
              `${s.executions} executes  ${megabytes(s.memoryBytes)}`,
          )
          .join("\n")
      : "No code sessions yet; code_execute starts one.";
    return reply.data(text, { sessions: list });
  },
});

export default [listSessions];
