// How many bytes a message to or from a child took on its stdio channel, kept beside the parsed
// value: the audit trail (hub/sessions/call-records.ts) records bytes in and out of every call, and
// serializing a megabyte screenshot a second time only to count it would hold the event loop.
const sizes = new WeakMap<object, number>();

/** Notes that `value` came in (or went out) as `bytes` of JSON. */
export function noteSize(value: unknown, bytes: number): void {
  if (typeof value === "object" && value !== null) sizes.set(value, bytes);
}

/** The size noted for `value`, else the size of its JSON (a hub tool's result, a 2026 child's reply). */
export function sizeOf(value: unknown): number {
  const noted = typeof value === "object" && value !== null ? sizes.get(value) : undefined;
  if (noted !== undefined) return noted;
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? "");
  } catch {
    return 0;
  }
}
