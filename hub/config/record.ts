// What the operator records in every session (AGENTBOX_RECORD, or `record` in the config file):
// terminals, browsers, both, or nothing. The hub checks the value and hands it to every server as
// AGENTBOX_RECORD (servers/lib/recording-names.ts reads it there).
import { RECORDING_KINDS, type RecordingKind } from "../../servers/lib/recording-names.js";
import { ConfigError } from "./schema.js";

export function recordFrom(envValue: string | undefined, fileValue: RecordingKind[] | undefined): RecordingKind[] {
  if (envValue === undefined) return [...new Set(fileValue ?? [])];
  const words = envValue
    .split(",")
    .map((w) => w.trim().toLowerCase())
    .filter(Boolean);
  if (words.length === 1 && (words[0] === "all" || words[0] === "off" || words[0] === "none")) return words[0] === "all" ? [...RECORDING_KINDS] : [];
  const bad = words.filter((w) => !(RECORDING_KINDS as readonly string[]).includes(w));
  if (bad.length)
    throw new ConfigError(`AGENTBOX_RECORD takes a comma-separated list of ${RECORDING_KINDS.join(", ")} (or all, or off); "${bad[0]}" is none of them`);
  return [...new Set(words as RecordingKind[])];
}
