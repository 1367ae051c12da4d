// Reading the audit trail in the audit tests: its lines, and waiting for one (lines are written as
// calls end, without waiting on the disk).
import { until } from "../../helpers/wait.js";

export interface Line {
  audit: string;
  tenant?: string;
  session?: string;
  tool?: string;
  server?: string;
  outcome?: string;
  errorType?: string;
  durationMs?: number;
  bytesIn?: number;
  bytesOut?: number;
  event?: string;
  reason?: string;
  client?: string;
  era?: string;
  taskId?: string;
  arguments?: Record<string, unknown>;
}

export const auditLines = (text: string): Line[] =>
  text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line)
    .filter((l) => l.audit);

/** Waits until the trail holds a line `match` finds. */
export async function lineWhere(read: () => string, match: (line: Line) => boolean): Promise<Line> {
  return until("an audit line to match", () => auditLines(read()).find(match), 15_000, 25).catch((err: Error) => {
    throw new Error(`${err.message}; the trail:\n${read()}`);
  });
}
