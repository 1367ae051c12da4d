// browser_record: start recording this session's browser as a Playwright trace, or stop and write it
// (../trace.ts). hub_recordings lists it and gives a URL; the playground replays it.
import { z } from "zod";
import { reply } from "../../lib/tool.js";
import { browserTool } from "../runtime.js";

const record = browserTool({
  name: "record",
  title: "Record the browser",
  description: "Record this session's browser (all tabs) as a Playwright trace, or stop and save it (also saved when the browser closes).",
  input: { record: z.boolean().describe("true: start; false: stop and save") },
  output: {
    recording: z.string().nullable().describe("The recording's id"),
    active: z.boolean(),
    bytes: z.number(),
    note: z.string().optional(),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ record: on }, b) {
    const trace = await b.record(on);
    if (!trace) {
      const text = on ? "The browser could not be recorded (see the server's log); it works unrecorded." : "This session's browser is not being recorded.";
      return reply.data(text, { recording: null, active: false, bytes: 0 });
    }
    const { recording } = trace;
    const data = { recording: recording.id, active: recording.active, bytes: recording.bytes, ...(recording.note ? { note: recording.note } : {}) };
    const text = recording.active
      ? `Recording this session's browser as ${recording.id}; stop and save it with record: false.`
      : recording.note
        ? `${recording.note} (recording ${recording.id})`
        : `Saved recording ${recording.id} (${recording.bytes} bytes); hub_recordings gives its URL.`;
    return reply.data(text, data);
  },
});

export default [record];
