// The OTLP/HTTP collector of test/helpers/otlp-collector.ts in a process of its own, for bench/tracing.ts:
// decoding every exported span in the bench's own process would take CPU from the clients that
// drive the load, and charge the traced hub for it. Prints {"endpoint"} once listening; each line
// read on stdin is answered with the {"spans","requests"} received so far; stdin's end stops it.
import readline from "node:readline";
import { startCollector } from "../test/helpers/otlp-collector.js";

const collector = await startCollector();
process.stdout.write(`${JSON.stringify({ endpoint: collector.endpoint })}\n`);
readline.createInterface({ input: process.stdin }).on("line", () => {
  process.stdout.write(`${JSON.stringify({ spans: collector.spans.length, requests: collector.requests })}\n`);
});
process.stdin.on("end", () => void collector.close().then(() => process.exit(0)));
