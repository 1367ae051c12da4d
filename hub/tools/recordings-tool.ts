// hub_recordings: the recordings of the caller's session or context (terminals, browser), gathered
// from its servers with agentbox/recordings/list, each with a URL under the hub's address that
// downloads it (hub/previews/recordings.ts). What a server answers is taken as untrusted
// (hub/previews/recording-listing.ts).
import { z } from "zod";
import { RECORDING_KINDS, RECORDINGS_LIST_METHOD, RECORDING_FORMATS, type RecordingEntry, type RecordingFormat } from "../../servers/lib/recording-names.js";
import { assertOffsetInRange, itemPageOutput, pageFooter, pageOfItems, pagingInput } from "../../servers/lib/paging.js";
import { defineTool, reply } from "../../servers/lib/tool.js";
import { sanitizeListing } from "../previews/recording-listing.js";
import type { ClientSession } from "../sessions/registry.js";
import type { SessionServices } from "../sessions/services.js";
import type { HubToolCall } from "../sessions/tool-calls.js";

type Context = HubToolCall & { hub: SessionServices };

const entryShape = z.object({
  id: z.string(),
  kind: z.enum(RECORDING_KINDS),
  format: z.enum(Object.keys(RECORDING_FORMATS) as [RecordingFormat, ...RecordingFormat[]]).describe("asciicast (v2) or playwright-trace (a .zip)"),
  startedAt: z.string(),
  endedAt: z.string().nullable().describe("null while it is still being recorded"),
  bytes: z.number(),
  url: z.string().describe("Downloads it without a key until expiresAt or your session's end"),
  expiresAt: z.string(),
  note: z.string().optional().describe("Why it stopped early (the disk budget ran out)"),
});

/** One entry of hub_recordings' answer, as a client reads it. */
export type ListedRecording = z.infer<typeof entryShape>;

/** Every recording the session's servers report, oldest first, each id once. */
async function gather(session: ClientSession): Promise<RecordingEntry[]> {
  const answers = await Promise.all(
    session.tenant.children
      .filter((c) => c.state === "ready") // a server not running records nothing now
      .map((child) => child.request(RECORDINGS_LIST_METHOD, { session: session.id }).then(sanitizeListing, () => [])),
  );
  const byId = new Map<string, RecordingEntry>();
  for (const entry of answers.flat()) if (!byId.has(entry.id)) byId.set(entry.id, entry);
  return [...byId.values()].sort((a, b) => a.startedAt.localeCompare(b.startedAt) || a.id.localeCompare(b.id));
}

export const hubRecordings = defineTool({
  name: "hub_recordings",
  title: "Recordings",
  description: "Your session's terminal and browser recordings, each with a URL that downloads it.",
  input: pagingInput({ unit: "recording", defaultLimit: 50, maxLimit: 500 }),
  output: { recordings: z.array(entryShape), ...itemPageOutput },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ offset, limit }, { hub, session, channel }: Context) {
    const page = pageOfItems(await gather(session), offset, limit);
    try {
      assertOffsetInRange(page, "recordings");
    } catch (err) {
      return reply.error((err as Error).message);
    }
    const { tenant } = session;
    const uid = tenant.identity?.uid ?? process.getuid?.() ?? 0;
    const base = channel.requestBase?.();
    const recordings = page.items.map((entry) => {
      const link = hub.recordings.link(
        {
          tenant: tenant.name,
          session: session.id,
          workspace: tenant.workspace,
          uid,
          id: entry.id,
          kind: entry.kind,
          format: entry.format,
        },
        base,
      );
      return { ...entry, url: link.url, expiresAt: link.expiresAt.toISOString() };
    });
    const lines = recordings.map(
      (r) => `${r.id}  ${r.kind}  ${r.startedAt} - ${r.endedAt ?? "recording"}  ${r.bytes} bytes  ${r.url}${r.note ? `\n  ${r.note}` : ""}`,
    );
    const footer = pageFooter(page, "recordings", "hub_recordings");
    const text = recordings.length ? [...lines, footer].filter(Boolean).join("\n") : "No recordings in this session.";
    return reply.data(text, { recordings, offset: page.offset, nextOffset: page.nextOffset, total: page.total });
  },
});
