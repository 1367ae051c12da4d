// Structured JSON logs. Children write to stderr (stdout belongs to JSON-RPC); the hub to stdout.
export type LogLevel = "debug" | "info" | "warn" | "error";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export function parseLogLevel(value: string | undefined, fallback: LogLevel = "info"): LogLevel {
  const v = (value ?? "").toLowerCase();
  return v in ORDER ? (v as LogLevel) : fallback;
}

export interface LoggerOptions {
  level?: LogLevel;
  write?: (line: string) => void;
  /** Applied to every string an entry holds, at any depth (the hub takes its own credentials out: hub/observability/minted-secrets.ts). */
  redact?: (text: string) => string;
}

export function createLogger(base: Record<string, unknown>, options: LoggerOptions = {}): Logger {
  const level = options.level ?? parseLogLevel(process.env.AGENTBOX_LOG_LEVEL);
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const { redact } = options;
  const replacer = redact ? (key: string, value: unknown) => redacted(errorReplacer(key, value), redact) : errorReplacer;
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    // no prototype: a key such as "__proto__" in fields is then just a key
    const entry: Record<string, unknown> = Object.assign(Object.create(null), { time: new Date().toISOString(), level: lvl, ...base, msg });
    // a field never overwrites what the entry says of itself (its time, level, message, or a base
    // field such as the tenant): values that reach fields may come from a child or a client
    if (fields) for (const key of Object.keys(fields)) entry[Object.hasOwn(entry, key) ? `field.${key}` : key] = fields[key];
    write(JSON.stringify(entry, replacer) + "\n");
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (fields) => createLogger({ ...base, ...fields }, { level, write, redact }),
  };
}

function errorReplacer(_key: string, value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message } : value;
}

const redacted = (value: unknown, redact: (text: string) => string) => (typeof value === "string" ? redact(value) : value);

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
