// The server's limits, read once. A module of its own so tools and the registry share one copy.
import { createLogger } from "../lib/log.js";
import { loadConfig } from "./config.js";

export const settings = loadConfig(createLogger({ server: "terminal" }));
