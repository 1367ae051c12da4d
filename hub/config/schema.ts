// The shape of agentbox's settings: the config file and the pieces the environment may give
// (rate limits, tenants), validated with zod so a bad value is named with what is allowed.
import { z } from "zod";
import { selectionConfigShape } from "./selection-spec.js";

export class ConfigError extends Error {}

export function describeZodError(where: string, error: z.ZodError): string {
  const lines = error.issues.map((i) => `  ${i.path.join(".") || "(root)"}: ${i.message}`);
  return `${where} is not valid:\n${lines.join("\n")}`;
}

/**
 * How a server's tools run for a client of the tasks extension, by tool name or glob (hub/catalog/catalog.ts),
 * overriding what the server declares. The hub holds every task's call itself, so a server that knows
 * nothing of tasks still gets its long calls run as tasks. No "required": the tool would then be refused
 * to every client without the extension, for nothing the hub needs.
 */
const taskSupportSchema = z
  .record(
    z.string(),
    z.enum(["optional", "forbidden"], {
      message:
        'taskSupport takes "optional" (a client of the tasks extension may run the tool as a task) or "forbidden" (never as a task); ' +
        '"required" is not offered: it would refuse the tool to every client without the extension',
    }),
  )
  .refine((support) => Object.keys(support).every((key) => key.trim() !== ""), {
    message: 'a taskSupport key is a tool name (the server\'s own or the published one) or a glob such as "*"; an empty one names nothing',
  });

const toolFilter = z.object({ allow: z.array(z.string()).optional(), deny: z.array(z.string()).optional() }).strict();

// What an HTTP header can carry (RFC 9110): a token for the name; for the value, tab and the
// characters from space to "~" and from U+0080 to U+00FF (sent as those bytes). fetch refuses anything else
// only when the server is first reached, with a message naming neither the server nor the header.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const UNSENDABLE_IN_VALUE = /[^\t\x20-\x7e\x80-\xff]/u;

/** Why a header of a server entry cannot be sent, or undefined when it can. */
export function unsendableHeader(server: string, name: string, value: string): string | undefined {
  const header = `server "${server}", header "${name}"`;
  if (!HEADER_NAME.test(name)) return `${header}: not a header name (letters, digits and !#$%&'*+-.^_\`|~ only)`;
  const bad = UNSENDABLE_IN_VALUE.exec(value);
  if (!bad) return undefined;
  const code = bad[0].codePointAt(0)!;
  const what = code < 0x20 || code === 0x7f ? "a control character" : `"${bad[0]}"`;
  return (
    `${header}: its value holds ${what} (U+${code.toString(16).toUpperCase().padStart(4, "0")}) at character ${bad.index + 1}, which an HTTP ` +
    'header cannot carry (tab, printable ASCII and Latin-1 only). Write the real value there (a placeholder such as "Bearer …" must be replaced).'
  );
}

export const serverConfigSchema = z
  .object({
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
    url: z.string().url().optional(),
    headers: z.record(z.string(), z.string()).optional(),
    prefix: z
      .string()
      .regex(/^[a-zA-Z0-9_-]*$/, "prefix may use letters, digits, _ and - only")
      .optional(),
    enabled: z.boolean().optional(),
    start: z.enum(["eager", "lazy"]).optional(),
    // "session": one process per client session that uses the server (hub/children/session-instances.ts)
    instances: z.enum(["shared", "session"]).optional(),
    timeoutMs: z.number().int().positive().optional(),
    maxTotalTimeoutMs: z.number().int().positive().optional(),
    maxConcurrency: z.number().int().positive().optional(),
    maxQueue: z.number().int().nonnegative().optional(),
    tools: toolFilter.optional(),
    taskSupport: taskSupportSchema.optional(),
    // "2026-07-28": reached with the SDK v2 client (over stdio or HTTP), that revision only; "auto": whichever era the server offers (hub/children/modern-link.ts)
    protocol: z.enum(["2026-07-28", "auto"], { message: 'protocol is "2026-07-28" or "auto" (leave it out for the 2025 initialize handshake)' }).optional(),
  })
  .strict()
  .refine((s) => Boolean(s.command) !== Boolean(s.url), { message: "give either command (stdio) or url (HTTP), not both" })
  .refine((s) => s.instances !== "session" || !s.url, {
    message: 'instances "session" starts a process per client session: it needs a command (stdio), not a url',
    path: ["instances"],
  });

export type ServerConfig = z.infer<typeof serverConfigSchema> & {
  /**
   * Why this entry cannot start as written (a relative path found nowhere: ./server-paths.ts). Set
   * by the hub, never read from the file (the schema above is strict): the server fails alone, the
   * others serve.
   */
  unstartable?: string;
};

const rateSpec = z.string().regex(/^\d+\s*\/\s*(s|sec|second|m|min|minute|h|hour)$/, 'a rate like "100/min", "5/s" or "1000/hour"');
export const rateLimitsSchema = z.union([
  z.literal(false),
  z
    .object({
      methods: z.record(z.string(), rateSpec).optional(),
      tools: z.record(z.string(), rateSpec).optional(),
    })
    .strict(),
]);
export type RateLimitsConfig = z.infer<typeof rateLimitsSchema>;

const tenantLimitsSchema = z
  .object({
    processes: z.number().int().min(16).optional(),
    memoryMiB: z.number().int().min(64).optional(),
    diskMiB: z.number().int().min(1).optional(),
    sharedMemoryMiB: z.number().int().min(1).optional(),
  })
  .strict();
export type TenantLimits = z.infer<typeof tenantLimitsSchema>;

const portRangeText = z.string().regex(/^\s*\d{1,5}\s*(-\s*\d{1,5}\s*)?$/, 'a port range such as "61000-65535"');

// hub/config/network.ts reads these
const networkSchema = z
  .object({
    isolation: z.enum(["auto", "off"], { message: 'network.isolation is "auto" (tenants\' ports kept apart where the kernel allows) or "off"' }).optional(),
    ports: portRangeText.optional(),
    portsPerTenant: z.number().int().min(1).max(10_000).optional(),
  })
  .strict();

export const TENANT_NAME = /^[a-z][a-z0-9-]{0,31}$/;
const tenantSchema = z
  .object({
    apiKey: z.string().min(1, "an API key may not be empty"),
    uid: z
      .number()
      .int()
      .min(1000)
      .max(2 ** 31 - 2)
      .optional(),
    limits: tenantLimitsSchema.optional(),
    // the TCP ports this tenant's processes may listen on, instead of a block given in config order
    ports: portRangeText.optional(),
    // what this tenant's sessions see by default (hub/config/selection-spec.ts); its keys replace the global ones
    ...selectionConfigShape,
  })
  .strict();
export type TenantConfig = z.infer<typeof tenantSchema> & { name: string };

// hub/config/oauth.ts reads these
const oauthSchema = z
  .object({
    issuer: z.string().min(1, "auth.oauth.issuer is the authorization server's issuer URL"),
    audience: z.string().min(1).optional(),
    tenantClaim: z.string().min(1).optional(),
    scopes: z.boolean().optional(),
    maxTenants: z.number().int().min(1).optional(),
    idleSeconds: z.number().int().min(1).optional(),
    introspection: z
      .object({ clientId: z.string().min(1), clientSecret: z.string().min(1), endpoint: z.string().url().optional() })
      .strict()
      .optional(),
  })
  .strict();

export const fileSchema = z
  .object({
    host: z.string().optional(),
    port: z.number().int().min(0).max(65535).optional(),
    workspace: z.string().optional(),
    apiKey: z.string().optional(),
    metricsKey: z.string().min(1, "the metrics key may not be empty").optional(),
    logLevel: z.string().optional(),
    corsOrigins: z.array(z.string()).optional(),
    allowedHosts: z.array(z.string()).optional(),
    trustedProxies: z.array(z.string()).optional(),
    sessionIdleMs: z.number().int().positive().optional(),
    sessionInstances: z.number().int().positive().optional(),
    maxBodyBytes: z.number().int().positive().optional(),
    maxMessageBytes: z.number().int().positive().optional(),
    taskSlotsPercent: z.number().int().min(1).max(100, "taskSlotsPercent is a percentage of each server's slots, 1 to 100").optional(),
    queuedCallBytes: z.number().int().positive().optional(),
    jsonResponses: z.boolean().optional(),
    mcpServers: z
      .record(z.string(), serverConfigSchema)
      .superRefine((servers, ctx) => {
        for (const [server, entry] of Object.entries(servers)) {
          for (const [name, value] of Object.entries(entry.headers ?? {})) {
            const message = unsendableHeader(server, name, value);
            if (message) ctx.addIssue({ code: "custom", path: [server, "headers", name], message });
          }
        }
      })
      .optional(),
    rateLimits: rateLimitsSchema.optional(),
    tenants: z.record(z.string().regex(TENANT_NAME, "a tenant name uses a-z, 0-9 and - (at most 32, starting with a letter)"), tenantSchema).optional(),
    limits: tenantLimitsSchema.optional(),
    network: networkSchema.optional(),
    stateDir: z.string().optional(),
    // sign-in with OAuth: people as tenants (hub/config/oauth.ts)
    auth: z.object({ oauth: oauthSchema.optional() }).strict().optional(),
    // what every session records (hub/config/record.ts)
    record: z.array(z.enum(["terminal", "browser"])).optional(),
    // selection hook: default servers/tools/catalog for every session (hub/config/selection-spec.ts)
    ...selectionConfigShape,
  })
  .strict();
export type ConfigFile = z.infer<typeof fileSchema>;
