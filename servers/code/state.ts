// What the code tools share, created once per server process: the settings and every client
// session's interpreters.
import { createLogger } from "../lib/log.js";
import { loadConfig } from "./config.js";
import { CodeSessions } from "./sessions.js";

export const config = loadConfig();
export const sessions = new CodeSessions(config, createLogger({ server: "code" }));
