// What a server says of a session's recordings, taken as untrusted: the tenant controls its
// servers. Only well-formed entries pass (an id that is no path, a kind with its own format, dates,
// a size), at most MAX_PER_SERVER of them, notes cut short and stripped of control characters.
import { z } from "zod";
import { RECORDING_FORMATS, RECORDING_ID, RECORDING_KINDS, type RecordingEntry, type RecordingFormat } from "../../servers/lib/recording-names.js";

export const MAX_PER_SERVER = 1000;
const NOTE_CHARS = 300;

const FORMAT_OF_KIND: Record<(typeof RECORDING_KINDS)[number], RecordingFormat> = { terminal: "asciicast", browser: "playwright-trace" };

const date = z
  .string()
  .max(40)
  .refine((s) => !Number.isNaN(Date.parse(s)));
const entrySchema = z.object({
  id: z.string().regex(RECORDING_ID),
  kind: z.enum(RECORDING_KINDS),
  format: z.enum(Object.keys(RECORDING_FORMATS) as [RecordingFormat, ...RecordingFormat[]]),
  startedAt: date,
  endedAt: date.nullable(),
  bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  note: z.string().optional(),
});

/** The well-formed entries of a server's answer to agentbox/recordings/list. */
export function sanitizeListing(answer: unknown): RecordingEntry[] {
  const list = (answer as { recordings?: unknown } | undefined)?.recordings;
  if (!Array.isArray(list)) return [];
  const out: RecordingEntry[] = [];
  for (const item of list.slice(0, MAX_PER_SERVER)) {
    const parsed = entrySchema.safeParse(item);
    if (!parsed.success || FORMAT_OF_KIND[parsed.data.kind] !== parsed.data.format) continue;
    const { note, ...entry } = parsed.data;
    const cleanNote = note?.replace(/[\u0000-\u001f\u007f-\u009f]/g, " ").slice(0, NOTE_CHARS);
    out.push({
      ...entry,
      startedAt: new Date(entry.startedAt).toISOString(),
      endedAt: entry.endedAt && new Date(entry.endedAt).toISOString(),
      ...(cleanNote ? { note: cleanNote } : {}),
    });
  }
  return out;
}
