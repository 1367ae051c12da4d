// How a session or context is named wherever its id must not be shown (an id is a credential: an
// Mcp-Session-Id, the start of a context handle): hub_sessions, the audit trail, traces, the log.
import { createHash } from "node:crypto";

export const sessionLabel = (id: string) => createHash("sha256").update(id).digest("hex").slice(0, 8);
