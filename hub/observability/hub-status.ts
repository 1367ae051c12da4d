// What GET / and hub_status report, as one shape: the hub_status tool's output schema, and the
// type hub/hub.ts builds the report to.
import { z } from "zod";

const serverStatus = z.object({
  tenant: z.string().optional().describe("The tenant this server instance serves (hubs with several tenants only)"),
  name: z.string(),
  prefix: z.string().describe("What the server's tool names begin with"),
  transport: z.enum(["stdio", "http"]),
  state: z.string().describe("idle (starts on its first call), starting, ready, restarting, failed, disabled or stopped"),
  pid: z.number().nullable(),
  restarts: z.number(),
  tools: z.number(),
  sessionInstances: z.number().optional().describe('Its processes for client sessions now (instances "session")'),
  running: z.number().describe("Calls running in the server now"),
  queued: z.number().describe("Calls waiting for one of its slots"),
  lastError: z.string().optional().describe("Why it is not ready"),
});

export const hubStatusShape = {
  name: z.literal("agentbox"),
  version: z.string(),
  replica: z.string().optional().describe("This replica's name (AGENTBOX_REPLICA)"),
  draining: z.literal(true).optional().describe("Present while the hub finishes its calls before it stops"),
  uptimeSeconds: z.number(),
  ready: z.boolean().describe("Every server is ready or starts on its first call, and the hub is not draining"),
  sessions: z.number(),
  workspace: z.string(),
  isolation: z.object({
    mode: z.enum(["uid", "shared-uid"]),
    tenants: z.number().optional(),
    summary: z.string(),
    network: z.enum(["isolated", "shared"]).describe("Whether one tenant's processes are kept from the sockets another's listen on"),
    networkSummary: z.string().describe("How (Landlock port blocks), or why not"),
    ports: z.string().optional().describe("The TCP ports this tenant's processes may listen on (also $AGENTBOX_PORTS; $PORT is the first)"),
  }),
  disk: z
    .object({ usedBytes: z.number().optional(), budgetBytes: z.number(), frozen: z.boolean() })
    .optional()
    .describe("The tenant's disk budget, when it has one"),
  servers: z.array(serverStatus),
};

export type HubStatus = z.infer<z.ZodObject<typeof hubStatusShape>>;
