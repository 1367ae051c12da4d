// The interpreters of every client session. A client session (the hub's _meta session) owns a
// set of named code sessions per language; they end with it, or after an idle time.
import type { Logger } from "../lib/log.js";
import { SessionStore } from "../lib/session-state.js";
import { ToolError } from "../lib/tool.js";
import type { CodeConfig } from "./config.js";
import { Kernel, type Language } from "./kernel.js";

export const DEFAULT_SESSION = "default";

type Kernels = Map<string, Kernel>;

const key = (language: Language, name: string) => `${language}:${name}`;

export class CodeSessions {
  private readonly store: SessionStore<Kernels>;

  constructor(
    private readonly config: CodeConfig,
    private readonly log: Logger,
  ) {
    this.store = new SessionStore<Kernels>({
      create: () => new Map(),
      dispose: async (kernels, session, reason) => {
        log.debug("freeing code sessions", { session, reason, count: kernels.size });
        await Promise.allSettled([...kernels.values()].map((k) => k.close()));
      },
      idleMs: config.idleMs,
      describeAs: "code",
      describe: (kernels) => [...kernels.values()].map((k) => ({ language: k.language, name: k.name, busy: k.busy, executions: k.executions })),
    });
  }

  /**
   * Run `fn` with the named interpreter of this client session (created, not yet started, on first
   * use), holding the session busy meanwhile: a run longer than the idle time is not freed under it.
   */
  async withKernel<R>(
    session: string,
    language: Language,
    name: string,
    workspace: string,
    token: string | undefined,
    fn: (kernel: Kernel) => Promise<R>,
  ): Promise<R> {
    return this.store.use(session, (kernels) => {
      let kernel = kernels.get(key(language, name));
      if (!kernel) {
        kernel = new Kernel({ language, name, session, token, workspace, config: this.config, log: this.log.child({ session, code: name, language }) });
        kernels.set(key(language, name), kernel);
      }
      return fn(kernel);
    });
  }

  /** This client session's interpreters, without creating anything. */
  async list(session: string): Promise<Kernel[]> {
    const kernels = await this.store.peek(session);
    return kernels ? [...kernels.values()] : [];
  }

  /** A fresh interpreter for one code session; throws when the session does not exist. */
  async reset(session: string, language: Language, name: string): Promise<Kernel> {
    const kernels = await this.store.peek(session);
    const kernel = kernels?.get(key(language, name));
    if (!kernel) {
      const known = kernels ? [...kernels.values()].map((k) => `${k.language}:${k.name}`) : [];
      throw new ToolError(
        `There is no ${language} session '${name}' to reset${known.length ? `; this client has: ${known.join(", ")}` : "; this client has no code sessions yet"}.`,
      );
    }
    await kernel.restart();
    return kernel;
  }

  async closeAll(): Promise<void> {
    await this.store.releaseAll();
  }
}
