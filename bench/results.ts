// Where results go: one JSON file per benchmark under bench/results/, with the conditions they
// were measured in (this machine is shared, so the load average is part of the record).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { projectRoot } from "./targets.js";

export const resultsDir = (): string => path.join(projectRoot(), "bench", "results");

export function environment() {
  let commit = "unknown";
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: projectRoot(), encoding: "utf8" }).trim();
  } catch {
    // not a git checkout
  }
  return {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
    commit,
  };
}

export function writeResult(name: string, data: Record<string, unknown>): string {
  fs.mkdirSync(resultsDir(), { recursive: true });
  const file = path.join(resultsDir(), `${name}.json`);
  fs.writeFileSync(file, JSON.stringify({ benchmark: name, environment: environment(), ...data }, null, 2) + "\n");
  return file;
}

export function readResult<T = Record<string, unknown>>(name: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(resultsDir(), `${name}.json`), "utf8")) as T;
  } catch {
    return undefined;
  }
}
