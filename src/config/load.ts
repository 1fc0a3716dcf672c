/**
 * Loading configuration: find the file, substitute `${ENV_VAR}`, parse YAML, validate.
 * Every problem becomes a ConfigError whose message names the key path, the value found and
 * what was expected. This module and src/main.ts are the only places that read env for config.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseDocument } from "yaml";
import type { z } from "zod";
import { type Config, configSchema } from "./schema.js";

/** A configuration problem. `issues` are one line each, ready to print. */
export class ConfigError extends Error {
  readonly code = "bad_config";
  readonly issues: string[];
  readonly file: string | undefined;
  constructor(file: string | undefined, issues: string[]) {
    super(
      `${file ? `config ${file}` : "config"}: ${issues.length === 1 ? issues[0] : `${issues.length} problems`}`,
    );
    this.name = "ConfigError";
    this.issues = issues;
    this.file = file;
  }
  /** Multi-line text for a terminal. */
  describe(): string {
    const where = this.file ? `in ${this.file}` : "in the configuration";
    return [`switchyard: bad configuration ${where}:`, ...this.issues.map((i) => `  - ${i}`)].join("\n");
  }
}

export interface LoadedConfig {
  config: Config;
  /** The file read, or undefined when none exists and defaults are used. */
  file: string | undefined;
}

export interface LoadConfigOptions {
  /** Explicit path (--config). */
  path?: string;
  /** Working directory to look for switchyard.yaml in. */
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Resolves the file (`--config`, then `SWITCHYARD_CONFIG`, then `./switchyard.yaml`), loads and
 * validates it. No file at all → defaults. An explicitly named file that is missing is an error.
 */
export function loadConfig(options: LoadConfigOptions): LoadedConfig {
  const explicit = options.path ?? options.env.SWITCHYARD_CONFIG;
  const file = explicit ? resolve(options.cwd, explicit) : resolve(options.cwd, "switchyard.yaml");
  if (!existsSync(file)) {
    if (explicit) throw new ConfigError(file, [`file not found: ${file}`]);
    return { config: parseConfig({}, undefined), file: undefined };
  }
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(file, [`cannot read ${file}: ${(err as Error).message}`]);
  }
  return { config: parseConfigText(text, file, options.env), file };
}

/** Parses YAML text after `${VAR}` substitution and validates it. */
export function parseConfigText(text: string, file: string | undefined, env: NodeJS.ProcessEnv): Config {
  const issues: string[] = [];
  const substituted = substituteEnv(text, env, issues);
  const doc = parseDocument(substituted, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      file,
      doc.errors.map((e) => `YAML syntax: ${e.message.split("\n")[0]}`),
    );
  }
  if (issues.length > 0) throw new ConfigError(file, issues);
  const raw: unknown = doc.toJS() ?? {};
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ConfigError(file, [`top level: found ${describeValue(raw)}, expected a mapping of sections`]);
  }
  return parseConfig(raw, file);
}

/** Validates an already-parsed object. */
export function parseConfig(raw: unknown, file: string | undefined): Config {
  const result = configSchema.safeParse(raw);
  if (result.success) {
    const config = result.data;
    if (config.lanes.reservedForHuman >= config.lanes.maxConcurrent) {
      throw new ConfigError(file, [
        `lanes.reservedForHuman: found ${config.lanes.reservedForHuman}, expected fewer than lanes.maxConcurrent (${config.lanes.maxConcurrent}) so background work can run`,
      ]);
    }
    return config;
  }
  throw new ConfigError(
    file,
    result.error.issues.map((issue) => formatIssue(issue, raw)),
  );
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** `${VAR}` and `${VAR:-default}`; `$${...}` escapes. A missing variable is an issue. */
function substituteEnv(text: string, env: NodeJS.ProcessEnv, issues: string[]): string {
  return text
    .split("\n")
    .map((line, index) => {
      if (/^\s*#/.test(line)) return line;
      return line.replace(ENV_REF, (match, name: string, fallback: string | undefined, offset: number) => {
        if (offset > 0 && line[offset - 1] === "$") return match.slice(0);
        const value = env[name];
        if (value !== undefined && value !== "") return value;
        if (fallback !== undefined) return fallback;
        issues.push(`line ${index + 1}: environment variable ${name} is not set (used as \${${name}})`);
        return "";
      });
    })
    .join("\n")
    .replace(/\$\$\{/g, "${");
}

function formatIssue(issue: z.core.$ZodIssue, raw: unknown): string {
  const path = issue.path.map(String).join(".") || "(top level)";
  if (issue.code === "unrecognized_keys") {
    const where = issue.path.length > 0 ? `${path}.` : "";
    return issue.keys
      .map((key) => `${where}${key}: unknown key (not part of the configuration; check the spelling)`)
      .join("\n  - ");
  }
  const last = String(issue.path[issue.path.length - 1] ?? "");
  // Never echo secrets back in an error message.
  const found = /key|token|secret|password/i.test(last)
    ? "a value (hidden)"
    : describeValue(valueAt(raw, issue.path));
  let expected = issue.message;
  if (issue.code === "invalid_type") expected = `expected ${issue.expected}`;
  else if (issue.code === "invalid_value")
    expected = `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
  else if (issue.code === "too_small") expected = `expected at least ${String(issue.minimum)}`;
  else if (issue.code === "too_big") expected = `expected at most ${String(issue.maximum)}`;
  return `${path}: found ${found}, ${expected}`;
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = raw;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (typeof value === "string")
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return String(value);
}
