// The address people reach the hub by, for the URLs hub_preview, hub_live_view and hub_recordings
// return: the operator's AGENTBOX_PUBLIC_URL, else the scheme and host of the MCP request that
// called the tool (from Host, or X-Forwarded-* of a trusted proxy: hub/http/trusted-proxies.ts).
// Each request carries it to what answers it (a call's channel, a 2026 request's context) as a
// function: worked out only when a link is made, not for every call. (It was an
// AsyncLocalStorage: in Node 20 and 22 that turns on promise hooks, a quarter of the hub's CPU
// per relayed call.)

/** The base URL (`http://host:port`) of the request being answered; undefined when it had no Host. */
export type RequestBase = () => string | undefined;
