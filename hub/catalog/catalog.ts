// The merged view of every child's tools and prompts under their prefixes, and the map back
// from a published name to the child that owns it.
import picomatch from "picomatch";
import { distance } from "fastest-levenshtein";
import type { Prompt, ResourceTemplate, Tool } from "@modelcontextprotocol/sdk/types.js";
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import type { Child } from "../children/child.js";
import { joinToolName } from "../../servers/lib/names.js";
import { ToolSearch } from "./tool-search.js";
import { keepsSessionState, withContextArgument } from "./context-argument.js";
import { publishedAppUri, withPublishedAppUris } from "./app-uris.js";

const VALID_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export interface Owner {
  child: Child;
  original: string;
  /** The tool as listed (./context-argument.ts may have added its `context`). */
  listed?: Tool;
  /** Whether the hub added the `context` argument, which it then takes off before the child sees the call. */
  takesContext?: boolean;
}

export function publishedName(prefix: string, name: string): string {
  const joined = joinToolName(prefix, name);
  return VALID_NAME.test(joined) ? joined : joined.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || "_";
}

export class Catalog {
  private toolOwners = new Map<string, Owner>();
  private toolList: Tool[] = [];
  private promptOwners = new Map<string, Owner>();
  private promptList: Prompt[] = [];
  private filters = new Map<Child, (name: string, published: string) => boolean>();
  private taskSupport = new Map<Child, (name: string, published: string) => TaskSupport | undefined>();
  /** hub_find_tools' index of this catalog's tools (hub/catalog/tool-search.ts). */
  readonly search = new ToolSearch();
  /** Problems found by the last rebuild (collisions), for startup errors and logs. */
  collisions: string[] = [];

  /** @param reserved names the hub serves itself (hub_*): a child publishing one is a collision */
  constructor(
    private readonly children: Child[],
    private readonly reserved: ReadonlySet<string> = new Set(),
  ) {
    for (const child of children) {
      this.filters.set(child, makeFilter(child));
      this.taskSupport.set(child, configuredTaskSupport(child));
    }
  }

  rebuild(): void {
    const collisions: string[] = [];
    const tools = new Map<string, Owner>();
    const toolList: Tool[] = [];
    const prompts = new Map<string, Owner>();
    const promptList: Prompt[] = [];
    for (const child of this.children) {
      // a child's lists are emptied whenever it cannot serve them (crashed, failed to start)
      if (!child.enabled) continue;
      const keep = this.filters.get(child)!;
      const stateful = keepsSessionState(child);
      for (const tool of child.tools) {
        const name = publishedName(child.prefix, tool.name);
        if (!keep(tool.name, name)) continue;
        if (this.reserved.has(name)) {
          collisions.push(
            `Tool name collision: '${name}' (tool '${tool.name}' of server '${child.name}') is a tool the hub serves itself. Give server ` +
              `'${child.name}' a different "prefix" in the config.`,
          );
          continue;
        }
        const clash = tools.get(name);
        if (clash) {
          collisions.push(collisionMessage("Tool", name, clash, { child, original: tool.name }));
          continue;
        }
        // the config's word on running it as a task (hub/tasks/answer.ts reads execution.taskSupport) overrides the server's
        const support = this.taskSupport.get(child)!(tool.name, name);
        // the app it names (an MCP App's ui:// resource) is published under the child's prefix too (./app-uris.ts)
        const published = withPublishedAppUris(
          {
            ...tool,
            name,
            description: tool.description || `${tool.name} (from the ${child.name} server)`,
            ...(support ? { execution: { ...tool.execution, taskSupport: support } } : {}),
          },
          child.prefix,
        );
        const withContext = stateful ? withContextArgument(published) : undefined;
        const listed = withContext ?? published;
        tools.set(name, { child, original: tool.name, listed, takesContext: withContext !== undefined });
        toolList.push(listed);
      }
      for (const prompt of child.prompts) {
        const name = publishedName(child.prefix, prompt.name);
        const clash = prompts.get(name);
        if (clash) {
          collisions.push(collisionMessage("Prompt", name, clash, { child, original: prompt.name }));
          continue;
        }
        prompts.set(name, { child, original: prompt.name });
        promptList.push({ ...prompt, name, description: prompt.description || `${prompt.name} (from the ${child.name} server)` });
      }
    }
    this.toolOwners = tools;
    this.toolList = toolList;
    this.promptOwners = prompts;
    this.promptList = promptList;
    this.collisions = collisions;
  }

  get tools(): Tool[] {
    return this.toolList;
  }

  get prompts(): Prompt[] {
    return this.promptList;
  }

  tool(name: string): Owner | undefined {
    return this.toolOwners.get(name);
  }

  prompt(name: string): Owner | undefined {
    return this.promptOwners.get(name);
  }

  toolCount(child: Child): number {
    let n = 0;
    for (const owner of this.toolOwners.values()) if (owner.child === child) n++;
    return n;
  }

  /** Up to three published names close to an unknown one, for "did you mean". */
  suggestTools(name: string): string[] {
    return closest(name, [...this.toolOwners.keys()]);
  }

  suggestPrompts(name: string): string[] {
    return closest(name, [...this.promptOwners.keys()]);
  }

  /** Every enabled child's templates as published (a ui:// one under the child's prefix: ./app-uris.ts). */
  resourceTemplates(): Array<{ child: Child; template: ResourceTemplate }> {
    return this.children.flatMap((child) =>
      child.enabled
        ? child.resourceTemplates.map((template) => ({ child, template: { ...template, uriTemplate: publishedAppUri(child.prefix, template.uriTemplate) } }))
        : [],
    );
  }

  /** The child whose resource template matches a URI. */
  templateOwner(uri: string): Child | undefined {
    for (const { child, template } of this.resourceTemplates()) {
      try {
        if (new UriTemplate(template.uriTemplate).match(uri)) return child;
      } catch {
        // a template the SDK cannot parse matches nothing
      }
    }
    return undefined;
  }
}

function makeFilter(child: Child): (name: string, published: string) => boolean {
  const allow = child.config.tools?.allow;
  const deny = child.config.tools?.deny;
  const allowMatch = allow?.length ? picomatch(allow) : undefined;
  const denyMatch = deny?.length ? picomatch(deny) : undefined;
  return (name, published) => {
    if (allowMatch && !allowMatch(name) && !allowMatch(published)) return false;
    if (denyMatch && (denyMatch(name) || denyMatch(published))) return false;
    return true;
  };
}

type TaskSupport = NonNullable<NonNullable<Child["config"]["taskSupport"]>[string]>;

/** The server entry's taskSupport: a key that is the tool's own or published name first, then globs in the order written. */
function configuredTaskSupport(child: Child): (name: string, published: string) => TaskSupport | undefined {
  const entries = Object.entries(child.config.taskSupport ?? {});
  const patterns = entries.filter(([key]) => picomatch.scan(key).isGlob).map(([key, support]) => [picomatch(key), support] as const);
  const exact = new Map(entries);
  return (name, published) => exact.get(name) ?? exact.get(published) ?? patterns.find(([matches]) => matches(name) || matches(published))?.[1];
}

function collisionMessage(kind: string, name: string, first: Owner, second: Owner): string {
  return (
    `${kind} name collision: '${name}' is published by server '${first.child.name}' (${kind.toLowerCase()} '${first.original}') ` +
    `and by server '${second.child.name}' (${kind.toLowerCase()} '${second.original}'). Give one of them a different "prefix" in the config.`
  );
}

function closest(name: string, candidates: string[]): string[] {
  // far longer than any name may be (64): it resembles none, and an edit distance to a megabyte would hold the event loop
  if (name.length > 256) return [];
  const lower = name.toLowerCase();
  return candidates
    .map((c) => ({ c, d: c.toLowerCase().includes(lower) || lower.includes(c.toLowerCase()) ? 0 : distance(lower, c.toLowerCase()) }))
    .filter(({ d }) => d <= Math.max(3, Math.floor(name.length / 3)))
    .sort((a, b) => a.d - b.d)
    .slice(0, 3)
    .map(({ c }) => c);
}
