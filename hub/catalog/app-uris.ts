// The MCP Apps of children (extension io.modelcontextprotocol/ui): a tool names its app by a ui://
// resource (`_meta.ui.resourceUri`, and the flat `_meta["ui/resourceUri"]` older hosts still read),
// which the host then reads with resources/read. Two children may serve the same ui:// URI (two
// instances of one app server): the hub publishes each child's ui:// URIs under its prefix, as
// ui://<prefix>/<the rest>, in tools, resource lists, templates and read results, so each tool
// points at its own child's app and a read of it goes back to that child, with the prefix taken
// off again. Other schemes pass as they are; a child published without a prefix keeps its URIs.
// A tool only an app may call (visibility ["app"]) stays listed, for hosts to check an app's calls
// against, but the hub never offers it to the model itself (hub_find_tools).
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { RESOURCE_URI_META_KEY } from "@modelcontextprotocol/ext-apps/server";

const UI = "ui://";

const isAppUri = (uri: unknown): uri is string => typeof uri === "string" && uri.slice(0, UI.length).toLowerCase() === UI;

/** A child's ui:// URI (or template) as clients see it: under the child's prefix. */
export function publishedAppUri(prefix: string, uri: string): string {
  return prefix && isAppUri(uri) ? `${UI}${prefix}/${uri.slice(UI.length)}` : uri;
}

/** The child's own URI for one published under its prefix; undefined when the URI is not one of its published app URIs. */
export function childAppUri(prefix: string, uri: string): string | undefined {
  const rest = isAppUri(uri) ? uri.slice(UI.length) : undefined;
  return prefix && rest?.startsWith(`${prefix}/`) ? UI + rest.slice(prefix.length + 1) : undefined;
}

/** A tool as published: the app it names (either key) under the child's prefix. */
export function withPublishedAppUris(tool: Tool, prefix: string): Tool {
  const meta = tool._meta;
  if (!meta || !prefix) return tool;
  const ui = meta.ui as Record<string, unknown> | undefined;
  const nested = isAppUri(ui?.resourceUri);
  const flat = isAppUri(meta[RESOURCE_URI_META_KEY]);
  if (!nested && !flat) return tool;
  return {
    ...tool,
    _meta: {
      ...meta,
      ...(nested ? { ui: { ...ui, resourceUri: publishedAppUri(prefix, ui!.resourceUri as string) } } : {}),
      ...(flat ? { [RESOURCE_URI_META_KEY]: publishedAppUri(prefix, meta[RESOURCE_URI_META_KEY] as string) } : {}),
    },
  };
}

/**
 * Whether a model may be offered the tool: the spec's `_meta.ui.visibility` (default ["model",
 * "app"]) without "model" makes it a tool for its app's own calls, which hosts keep from the model.
 */
export function offeredToModel(tool: Tool): boolean {
  const visibility = (tool._meta?.ui as { visibility?: unknown } | undefined)?.visibility;
  return !Array.isArray(visibility) || visibility.includes("model");
}

/** Items carrying a `uri` (listed resources, read contents) as published. */
export function withPublishedUris<T extends { uri: string }>(items: T[], prefix: string): T[] {
  return items.map((item) => (isAppUri(item.uri) && prefix ? { ...item, uri: publishedAppUri(prefix, item.uri) } : item));
}
