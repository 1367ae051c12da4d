// Resources across a tenant's children: every page of each selected child's list, and which
// child a URI belongs to (as last listed, else by template, else the only server with resources).
import type { Resource } from "@modelcontextprotocol/sdk/types.js";
import { SESSION_META_KEY } from "../../servers/lib/session-events.js";
import { errorMessage, type Logger } from "../../servers/lib/log.js";
import { LISTED_STATES, type Child } from "../children/child.js";
import { protocolError } from "../protocol/jsonrpc.js";
import type { SessionView } from "../catalog/selection.js";
import type { ClientSession } from "./registry.js";
import type { ServedTenant } from "../tenants/served-tenant.js";
import { childAppUri, withPublishedUris } from "../catalog/app-uris.js";

const MAX_RESOURCES_PER_CHILD = 10_000;

function withResources(session: ClientSession, view: SessionView): Child[] {
  return session.tenant.children.filter((c) => LISTED_STATES.has(c.state) && c.capabilities.resources && view.allowsServer(c.name));
}

async function listOf(child: Child, session: ClientSession, log: Logger): Promise<Resource[]> {
  const resources: Resource[] = [];
  let cursor: string | undefined;
  session.reached.add(child);
  try {
    do {
      const page = (await child.request("resources/list", { ...(cursor ? { cursor } : {}), _meta: { [SESSION_META_KEY]: session.id } })) as {
        resources: Resource[];
        nextCursor?: string;
      };
      resources.push(...page.resources);
      cursor = page.nextCursor;
    } while (cursor && resources.length < MAX_RESOURCES_PER_CHILD);
  } catch (err) {
    log.warn("resources/list failed", { server: child.name, error: errorMessage(err) });
  }
  return resources;
}

/** Every resource the session's selected servers list, remembering who owns each URI. */
export async function listResources(session: ClientSession, view: SessionView, log: Logger): Promise<Resource[]> {
  const { resourceOwners } = session.tenant;
  const lists = await Promise.all(
    withResources(session, view).map(async (child) => {
      // an MCP App's ui:// resources under the child's prefix, so two instances of one app server are both listed
      const resources = withPublishedUris(await listOf(child, session, log), child.prefix);
      for (const r of resources) if (!resourceOwners.has(r.uri)) resourceOwners.set(r.uri, child);
      return resources;
    }),
  );
  return lists.flat();
}

/** The child whose prefix a published ui:// URI is under (../catalog/app-uris.ts): known without listing. */
function appOwner(tenant: ServedTenant, uri: string): Child | undefined {
  return tenant.children.find((c) => c.enabled && childAppUri(c.prefix, uri) !== undefined);
}

/** The child that owns a URI: an app's by its prefix, else as last listed or by template, whoever asks. */
export function ownerOf(tenant: ServedTenant, uri: string): Child | undefined {
  return appOwner(tenant, uri) ?? tenant.resourceOwners.get(uri) ?? tenant.catalog.templateOwner(uri);
}

/** The URI as its child knows it: a published ui:// URI without the child's prefix, any other as it is. */
export function childUri(owner: Child, uri: string): string {
  return childAppUri(owner.prefix, uri) ?? uri;
}

/** The child that owns a URI, if the session may reach it. */
export function knownOwner(session: ClientSession, view: SessionView, uri: string): Child | undefined {
  const owner = ownerOf(session.tenant, uri);
  return owner && view.allowsServer(owner.name) ? owner : undefined;
}

/** The child a resource request goes to, or a "not found" protocol error. */
export function resourceOwner(session: ClientSession, view: SessionView, uri: string): Child {
  const owner = knownOwner(session, view, uri);
  if (owner) return owner;
  const candidates = withResources(session, view);
  const unknown = !ownerOf(session.tenant, uri);
  if (unknown && candidates.length === 1) return candidates[0];
  throw protocolError(-32002, `Resource not found: ${uri}. List resources (resources/list) or templates to see what can be read.`, { uri });
}
