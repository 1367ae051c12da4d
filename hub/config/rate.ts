// A rate as written in the configuration and the environment ("100/min"), read one way everywhere.
const UNIT_SECONDS: Record<string, number> = { s: 1, sec: 1, second: 1, m: 60, min: 60, minute: 60, h: 3600, hour: 3600 };

export interface Rate {
  points: number;
  seconds: number;
}

/** "100/min" as 100 points per 60 seconds; undefined when it is not such a rate. */
export function rateOf(spec: string): Rate | undefined {
  const match = /^\s*(\d+)\s*\/\s*([a-z]+)\s*$/.exec(spec);
  const seconds = match ? UNIT_SECONDS[match[2]] : undefined;
  return match && seconds ? { points: Number(match[1]), seconds } : undefined;
}
