// The servers agentbox runs when its config names none (each is `servers/<name>/main.ts`), and the
// call rates they need by default. Kept beside the servers so the hub itself names none of them.
export const BUILTIN_SERVERS = ["file", "terminal", "browser", "markitdown", "arxiv", "code"] as const;

/** Per-tool default rates for the built-in servers' tools, on top of the hub's catch-all rule. */
export const BUILTIN_TOOL_RATES: Record<string, string> = { "file_*": "50/min", "browser_*": "20/min" };
