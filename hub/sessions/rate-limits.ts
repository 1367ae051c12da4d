// Rate limits per client (API key, else remote address): per method ("tools/list") and per tool,
// where a tool's limit comes from the most specific matching pattern ("file_read" beats "file_*"
// beats "*"). Counters are kept per client and tool, so one busy tool does not starve the others.
// The windows are rate-limiter-flexible's, which reads Date.now and setTimeout itself, so it takes
// no clock (hub/protocol/clock.ts): node:test's mock.timers drives it as it drives the hub's clock.
import picomatch from "picomatch";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { RateLimitsConfig } from "../config/config.js";
import { rateOf } from "../config/rate.js";

interface Rule {
  pattern: string;
  matches: (name: string) => boolean;
  specificity: number;
  limiter: RateLimiterMemory;
  spec: string;
}

export interface LimitVerdict {
  allowed: boolean;
  retryAfterMs: number;
  rule?: string;
}

const ALLOWED: LimitVerdict = { allowed: true, retryAfterMs: 0 };

function makeRule(pattern: string, spec: string): Rule {
  const { points, seconds } = rateOf(spec)!;
  const wildcards = (pattern.match(/[*?]/g) ?? []).length;
  return {
    pattern,
    matches: picomatch(pattern),
    // exact names first, then longer patterns, then fewer wildcards
    specificity: (wildcards === 0 ? 10_000 : 0) + pattern.length * 10 - wildcards,
    limiter: new RateLimiterMemory({ points, duration: seconds }),
    spec,
  };
}

export class RateLimits {
  private readonly methodRules: Rule[];
  private readonly toolRules: Rule[];
  private readonly ruleForTool = new Map<string, Rule | null>();

  constructor(config: RateLimitsConfig) {
    const methods = config === false ? {} : (config.methods ?? {});
    const tools = config === false ? {} : (config.tools ?? {});
    this.methodRules = Object.entries(methods)
      .map(([p, s]) => makeRule(p, s))
      .sort((a, b) => b.specificity - a.specificity);
    this.toolRules = Object.entries(tools)
      .map(([p, s]) => makeRule(p, s))
      .sort((a, b) => b.specificity - a.specificity);
  }

  async checkMethod(client: string, method: string): Promise<LimitVerdict> {
    const rule = this.methodRules.find((r) => r.matches(method));
    return rule ? consume(rule, `${client}\u0000${method}`) : ALLOWED;
  }

  /** The verdict for one call of a tool: at once when no rule limits it (most calls), else from its limiter. */
  checkTool(client: string, tool: string): LimitVerdict | Promise<LimitVerdict> {
    let rule = this.ruleForTool.get(tool);
    if (rule === undefined) {
      rule = this.toolRules.find((r) => r.matches(tool)) ?? null;
      this.ruleForTool.set(tool, rule);
    }
    return rule ? consume(rule, `${client}\u0000${tool}`) : ALLOWED;
  }
}

async function consume(rule: Rule, key: string): Promise<LimitVerdict> {
  try {
    await rule.limiter.consume(key);
    return ALLOWED;
  } catch (res) {
    if (res instanceof RateLimiterRes) {
      return { allowed: false, retryAfterMs: Math.max(1, res.msBeforeNext), rule: `${rule.pattern} ${rule.spec}` };
    }
    throw res;
  }
}
