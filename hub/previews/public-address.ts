// The address people reach the hub by, for the URLs hub_preview returns: the operator's
// AGENTBOX_PUBLIC_URL, else the scheme and host of the MCP request that called the tool (set by
// the HTTP front around the MCP endpoints, from Host, or X-Forwarded-* of a trusted proxy).
import { AsyncLocalStorage } from "node:async_hooks";

const requestBase = new AsyncLocalStorage<string>();

/** Run `work` knowing the base URL (`http://host:port`) of the request it serves. */
export function withRequestBase<T>(base: string, work: () => T): T {
  return requestBase.run(base, work);
}

/** The base URL of the request being served, if any. */
export function currentRequestBase(): string | undefined {
  return requestBase.getStore();
}
