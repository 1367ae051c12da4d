// code_reset: a fresh interpreter for one session (everything it defined is dropped).
import { defineTool, reply } from "../../lib/tool.js";
import { z } from "zod";
import { toolName } from "../../lib/names.js";
import { DEFAULT_SESSION } from "../sessions.js";
import { sessions } from "../state.js";
import { languageSchema, sessionNameSchema } from "./execute.js";

const reset = defineTool({
  name: "reset",
  title: "Restart a code session",
  description: () => `Restart a code session's interpreter (when stuck or broken): its state is dropped and a running ${toolName("execute")} is stopped.`,
  input: { language: languageSchema, session: sessionNameSchema },
  output: { language: z.enum(["python", "javascript"]), session: z.string(), pid: z.number().int().nullable() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ language, session }, ctx) {
    const name = session ?? DEFAULT_SESSION;
    const kernel = await sessions.reset(ctx.session, language, name);
    return reply.data(`The ${language} session '${name}' has a fresh interpreter (pid ${kernel.pid}); earlier state is gone.`, {
      language,
      session: name,
      pid: kernel.pid ?? null,
    });
  },
});

export default [reset];
