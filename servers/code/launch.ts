// How an interpreter of each language is started: command, arguments and environment.
import fs from "node:fs";
import path from "node:path";
import { withSessionClaim } from "../lib/session-claim.js";
import { SESSION_TOKEN_ENV, SESSION_TOKEN_HEADER, SESSION_TOKEN_HEADER_ENV } from "../lib/session-events.js";
import { nodeEnv, pythonVenv, type CodeConfig } from "./config.js";

export type Language = "python" | "javascript";

export interface LaunchSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * @param token the hub's callback token for this client session: the drivers call tools as that
 * session with it and nothing more (readable only by this tenant's own processes)
 */
export function launchSpec(language: Language, config: CodeConfig, name: string, token?: string): LaunchSpec {
  // the session's claim, so the hub's sweeper spares what the code starts while the session lives
  const env = withSessionClaim(
    {
      ...(process.env as Record<string, string>),
      ...(token ? { [SESSION_TOKEN_ENV]: token, [SESSION_TOKEN_HEADER_ENV]: SESSION_TOKEN_HEADER } : {}),
      AGENTBOX_CODE_SESSION: name,
    },
    token,
  );
  if (language === "python") {
    return {
      command: config.python,
      args: [path.join(config.pythonDir, "driver.py")],
      env: {
        ...env,
        PYTHONUNBUFFERED: "1",
        PYTHONIOENCODING: "utf-8",
        MPLBACKEND: "Agg",
        MPLCONFIGDIR: path.join(config.dataDir, "matplotlib"),
        AGENTBOX_PYTHON_VENV: pythonVenv(config),
      },
    };
  }
  return {
    command: process.execPath,
    // import() inside a vm context goes through the driver's resolver, which needs the vm
    // modules flag (it only enables that callback; the warning about it is noise to the user)
    args: ["--experimental-vm-modules", "--disable-warning=ExperimentalWarning", config.jsDriver],
    env: { ...env, AGENTBOX_NODE_ENV: nodeEnv(config) },
  };
}

/** Resident memory of a process, from /proc (Linux); undefined elsewhere or when it is gone. */
export function residentMemory(pid: number): number | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
