// The JavaScript side of one code session: a Node process that evaluates cells in one vm
// context, so globals persist between executes. Same protocol as the Python driver: JSON lines
// on fd 3, the user's output on fd 1 and 2 followed by an end marker after each cell.
import { Console } from "node:console";
import fs from "node:fs";
import { createRequire, isBuiltin } from "node:module";
import net from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import readline from "node:readline";
import util from "node:util";
import vm from "node:vm";
import { GENERATED, loadTools } from "./hub-tools.js";
import { CELL_LINE_OFFSET, DISPLAY_KEY, transformCell } from "./transform.js";

interface ExecuteMessage {
  type: "execute";
  id: number;
  cell: number;
  code: string;
  marker: string;
}

const envDir = process.env.AGENTBOX_NODE_ENV || process.cwd();
const channel = new net.Socket({ fd: 3, readable: true, writable: true });
const send = (message: Record<string, unknown>) => channel.write(JSON.stringify(message) + "\n");

const isPath = (specifier: string) => /^(\.{1,2}(\/|$)|\/|file:)/.test(specifier);

// require() finds packages `install` put in the session environment, then the workspace's own;
// relative paths are relative to the working directory (the workspace), as in a notebook
function userRequire(specifier: string): unknown {
  if (isPath(specifier)) return createRequire(path.join(process.cwd(), "noop.js"))(specifier);
  for (const base of [envDir, process.cwd()]) {
    try {
      return createRequire(path.join(base, "noop.js"))(specifier);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") throw err;
    }
  }
  return createRequire(path.join(envDir, "noop.js"))(specifier);
}

function createSessionContext(): vm.Context {
  const sandbox: Record<string, unknown> = {
    console: new Console({ stdout: process.stdout, stderr: process.stderr }),
    require: userRequire,
    process,
    Buffer,
  };
  // the timers and web APIs of Node itself; the language built-ins come with the context
  const hostGlobals = [
    "setTimeout",
    "clearTimeout",
    "setInterval",
    "clearInterval",
    "setImmediate",
    "clearImmediate",
    "queueMicrotask",
    "fetch",
    "Headers",
    "Request",
    "Response",
    "FormData",
    "Blob",
    "URL",
    "URLSearchParams",
    "TextEncoder",
    "TextDecoder",
    "AbortController",
    "AbortSignal",
    "structuredClone",
    "performance",
    "crypto",
    "atob",
    "btoa",
    "EventTarget",
    "Event",
  ] as const;
  for (const name of hostGlobals) sandbox[name] = (globalThis as Record<string, unknown>)[name];
  return vm.createContext(sandbox, { name: "agentbox-code" });
}

// import() of a bare name must resolve from the install environment: a module that lives there
// does the import, so Node's own resolver (exports maps, ESM-only packages) applies
function envImporter(): (specifier: string) => Promise<unknown> {
  const helper = path.join(envDir, ".agentbox-import.mjs");
  try {
    fs.mkdirSync(envDir, { recursive: true });
    if (!fs.existsSync(helper)) fs.writeFileSync(helper, "export default (specifier) => import(specifier);\n");
  } catch {
    return (specifier) => import(specifier);
  }
  let loaded: Promise<(specifier: string) => Promise<unknown>> | undefined;
  return async (specifier) => {
    loaded ??= import(pathToFileURL(helper).href).then((m) => m.default);
    return (await loaded)(specifier);
  };
}

const importFromEnv = envImporter();

async function userImport(specifier: string): Promise<unknown> {
  if (isPath(specifier)) {
    const url = specifier.startsWith("file:") ? specifier : pathToFileURL(path.resolve(process.cwd(), specifier)).href;
    return import(url);
  }
  if (isBuiltin(specifier)) return import(specifier);
  try {
    return await importFromEnv(specifier);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND") throw err;
    // not installed for the sessions: the workspace's own node_modules
    let resolved: string;
    try {
      resolved = createRequire(path.join(process.cwd(), "noop.js")).resolve(specifier);
    } catch {
      throw Object.assign(new Error(`Cannot find package '${specifier}': install it with code_install, or put it in the workspace's node_modules.`), {
        code: "ERR_MODULE_NOT_FOUND",
      });
    }
    return import(pathToFileURL(resolved).href);
  }
}

const context = createSessionContext();
let interruptCurrent: (() => void) | undefined;

function cellFile(cell: number): string {
  // a name that cannot clash with a real file; errors show it as <cell N>
  return path.join(process.cwd(), `agentbox-cell-${cell}.js`);
}

/** The error as the user's code sees it: message plus only the frames inside the cell. */
function formatError(err: unknown, cell: number, lineCount: number): string {
  if (!(err instanceof Error) && !(typeof err === "object" && err !== null && "stack" in err)) {
    return `Uncaught ${util.inspect(err)}`;
  }
  const file = cellFile(cell);
  const stack = String((err as Error).stack ?? err);
  const lines = stack.split("\n");
  const firstFrame = lines.findIndex((line) => /^\s+at /.test(line));
  const head = firstFrame < 0 ? lines : lines.slice(0, firstFrame);
  // frames in the cell, without the wrapper's call on the line after the user's last one
  const inCell = (line: string) => {
    const at = line.indexOf(`${file}:`);
    return at >= 0 && Number(line.slice(at + file.length + 1).split(":")[0]) <= lineCount;
  };
  const frames = firstFrame < 0 ? [] : lines.slice(firstFrame).filter(inCell);
  return [...head, ...frames].join("\n").split(file).join(`<cell ${cell}>`);
}

async function runCell(message: ExecuteMessage): Promise<{ status: string; value: string | null; error: string | null }> {
  if (/\btools\b/.test(message.code)) {
    // a fresh catalog for every cell that talks to the hub; a user's own `tools` is left alone
    const current = (context as Record<string, unknown>).tools as Record<symbol, unknown> | undefined;
    if (current === undefined || current?.[GENERATED]) (context as Record<string, unknown>).tools = await loadTools();
  }
  let interrupted = false;
  try {
    const source = transformCell(message.code);
    const script = new vm.Script(source, {
      filename: cellFile(message.cell),
      lineOffset: CELL_LINE_OFFSET,
      importModuleDynamically: ((specifier: string) => userImport(specifier)) as never,
    });
    // breakOnSigint stops a synchronous loop; the SIGINT handler below stops a pending await
    const promise = script.runInContext(context, { breakOnSigint: true }) as Promise<Record<string, unknown> | undefined>;
    const stop = new Promise<never>((_, reject) => {
      interruptCurrent = () => {
        interrupted = true;
        reject(new Error("interrupted"));
      };
    });
    const returned = await Promise.race([promise, stop]);
    const value = returned && typeof returned === "object" && DISPLAY_KEY in returned ? returned[DISPLAY_KEY] : undefined;
    return { status: "ok", value: value === undefined ? null : util.inspect(value, { depth: 4, maxArrayLength: 200 }), error: null };
  } catch (err) {
    const sigint = interrupted || (err as NodeJS.ErrnoException)?.code === "ERR_SCRIPT_EXECUTION_INTERRUPTED";
    return {
      status: sigint ? "interrupted" : "error",
      value: null,
      error: sigint ? "KeyboardInterrupt: the execute was interrupted (SIGINT)" : formatError(err, message.cell, message.code.split("\n").length),
    };
  } finally {
    interruptCurrent = undefined;
  }
}

process.on("SIGINT", () => {
  // outside synchronous code: give up waiting on the cell's promise, like KeyboardInterrupt
  interruptCurrent?.();
});
// a callback that throws after its cell ended must not take the session down
process.on("uncaughtException", (err) => process.stderr.write(`Uncaught ${util.inspect(err)}\n`));
process.on("unhandledRejection", (err) => process.stderr.write(`Unhandled rejection: ${util.inspect(err)}\n`));

let queue = Promise.resolve();
readline.createInterface({ input: channel }).on("line", (line) => {
  const message = JSON.parse(line) as ExecuteMessage;
  if (message.type !== "execute") return;
  queue = queue.then(async () => {
    const result = await runCell(message);
    // fd writes are synchronous, so the marker follows everything the cell printed
    fs.writeSync(1, message.marker);
    fs.writeSync(2, message.marker);
    send({ type: "result", id: message.id, ...result });
  });
});
// the server went away: nothing is left to answer to
channel.on("end", () => process.exit(0));
channel.on("error", () => process.exit(0));
send({ type: "ready", pid: process.pid, version: process.version });
