// A few lines of Node run under a tenant's uid, for what only its uid may do (read its processes'
// environments without CAP_SYS_PTRACE, remove its own entries in a sticky folder). The script's
// output is the tenant's to forge, so only a bounded amount of it is read and callers check its shape.
import { spawn } from "node:child_process";

/** The command line that runs a program as a tenant (tenants.ts tenantCommand, bound to one tenant). */
export type TenantCommand = (command: string, args: string[]) => { command: string; args: string[] };

/**
 * Runs `fn`'s source as `node -e` under the tenant, called with `args` (as JSON) and then `process.argv.slice(1)`
 * (`argv`). Resolves with at most `maxChars` of its stdout ("" when it cannot start): a script that writes more is
 * killed, and one that runs past `timeoutMs` too. `fn` uses no require(): the hub's bundle rewrites that call to a
 * helper of its own, which the tenant's process does not have (`process.getBuiltinModule` instead).
 */
export function runAsTenantScript(
  asTenant: TenantCommand,
  fn: (...args: never[]) => void,
  args: unknown[],
  argv: string[],
  limits: { maxChars: number; timeoutMs: number },
): Promise<string> {
  const script = `(${fn.toString()})(${[...args.map((a) => JSON.stringify(a)), "process.argv.slice(1)"].join(", ")})`;
  const { command, args: commandArgs } = asTenant(process.execPath, ["-e", script, ...argv]);
  return new Promise<string>((resolve) => {
    const child = spawn(command, commandArgs, { env: {}, stdio: ["ignore", "pipe", "ignore"], timeout: limits.timeoutMs });
    let text = "";
    child.stdout.setEncoding("latin1").on("data", (chunk: string) => {
      text += chunk;
      if (text.length > limits.maxChars) child.kill("SIGKILL");
    });
    child.on("error", () => resolve(""));
    child.on("close", () => resolve(text.slice(0, limits.maxChars)));
  });
}
