// The size of the catalog a model reads (issue 15): a hub with every built-in server, one
// tools/list, measured per server and in total against the 40,000-byte budget.
import { builtinServers } from "../hub/config/config.js";
import { CATALOG_BUDGET_BYTES, measureCatalog } from "./catalog-size.js";
import { writeResult } from "./results.js";
import { connectHttp, startHub } from "./targets.js";

export async function runCatalog(log: (msg: string) => void): Promise<Record<string, unknown>> {
  // servers start on first use: tools/list is answered from the build's manifest, as clients see it
  const hub = await startHub({ servers: builtinServers() });
  try {
    const { client, close } = await connectHttp(hub.url);
    try {
      const { tools } = await client.listTools();
      const size = measureCatalog(tools);
      log(`catalog: ${size.tools} tools, ${size.bytes} bytes (~${size.tokens} tokens), budget ${CATALOG_BUDGET_BYTES}`);
      const result = { ...size, budgetBytes: CATALOG_BUDGET_BYTES, withinBudget: size.bytes <= CATALOG_BUDGET_BYTES };
      writeResult("catalog", result);
      return result;
    } finally {
      await close();
    }
  } finally {
    await hub.stop();
  }
}
