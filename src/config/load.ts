/**
 * Loading configuration: find the file, parse YAML, substitute `${ENV_VAR}` in string values,
 * validate. Every problem becomes a ConfigError whose message names the key path, the value
 * found and what was expected. This module and src/main.ts are the only places that read env
 * for config.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { type Document, LineCounter, isMap, isScalar, isSeq, parseDocument } from "yaml";
import type { z } from "zod";
import { ConfigError } from "../util/config-error.js";
import type { ChannelModules } from "../channels/registry.js";
import { buildConfigSchema, type Config, configSchema } from "./schema.js";

export interface LoadedConfig {
  config: Config;
  /** The file read, or undefined when none exists and defaults are used. */
  file: string | undefined;
  /**
   * With `lenientEnv`: each `${VAR}` the environment lacks, as `${VAR} (key.path)`; empty when
   * every one resolved (always empty without `lenientEnv`).
   */
  unresolved: string[];
}

export interface LoadConfigOptions {
  /** Explicit path (--config). */
  path?: string;
  /** Working directory to look for switchyard.yaml in. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /**
   * Default false: a `${VAR}` the environment lacks (no default) is a ConfigError. True, for
   * commands that only read (`auth status`, `cron list`): it is listed in `unresolved` instead;
   * its value keeps the `${VAR}` text, or is left out (with the entry holding it) where that text
   * is not a valid value. Never for anything that starts the gateway.
   */
  lenientEnv?: boolean;
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
    return { config: parseConfig({}, undefined), file: undefined, unresolved: [] };
  }
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(file, [`cannot read ${file}: ${(err as Error).message}`]);
  }
  return { ...parseConfigTextWith(text, file, options.env, options.lenientEnv ?? false), file };
}

/**
 * Parses YAML text, substitutes `${VAR}` in its string values and validates it. Substitution
 * runs on the parsed tree, so a value may contain anything (`#`, `: `, quotes) and a `${X}` in
 * a comment or a key is left alone. A substituted value is a string unless its key wants a
 * number or a boolean and it reads as one (`port: ${PORT}`).
 */
export function parseConfigText(text: string, file: string | undefined, env: NodeJS.ProcessEnv): Config {
  return parseConfigTextWith(text, file, env, false).config;
}

/** {@link parseConfigText}, with {@link LoadConfigOptions.lenientEnv}. */
function parseConfigTextWith(
  text: string,
  file: string | undefined,
  env: NodeJS.ProcessEnv,
  lenientEnv: boolean,
): { config: Config; unresolved: string[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true, lineCounter });
  if (doc.errors.length > 0) {
    const lines = text.split("\n");
    const issues = doc.errors.map((e) => {
      // prettyErrors ends the first line with ":" before a code frame; quote the line instead.
      const first = (e.message.split("\n")[0] ?? "").replace(/:\s*$/, "");
      const line = e.linePos?.[0]?.line;
      const source = line !== undefined ? lines[line - 1]?.trim() : undefined;
      return `YAML syntax: ${first}${source ? ` (the line reads: ${source.length > 80 ? `${source.slice(0, 77)}...` : source})` : ""}`;
    });
    if (/[[{][^\n#]*\$\{/.test(text))
      issues.push('a ${VAR} inside [ ] or { } must be quoted there, e.g. ["${TELEGRAM_GROUP}"]');
    throw new ConfigError(file, issues);
  }
  const issues: string[] = [];
  const substituted = new Map<string, string>();
  const unresolved: Unresolved[] = [];
  const lenient = lenientEnv ? unresolved : undefined;
  substituteEnv(doc.contents, [], { env, issues, lineCounter, substituted, unresolved: lenient });
  if (issues.length > 0) throw new ConfigError(file, issues);
  const raw: unknown = doc.toJS() ?? {};
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ConfigError(file, [`top level: found ${describeValue(raw)}, expected a mapping of sections`]);
  }
  typeSubstitutedValues(raw, substituted, doc);
  if (unresolved.length > 0)
    leaveOutUnresolved(
      raw,
      unresolved.map((u) => u.path),
    );
  return {
    config: parseConfig(raw, file),
    unresolved: unresolved.map((u) => `\${${u.name}} (${u.path.join(".")})`),
  };
}

/** A `${VAR}` the environment lacks, and the key path of the value that names it. */
interface Unresolved {
  name: string;
  path: string[];
}

/**
 * Where a value that kept its `${VAR}` text is not valid (`xoxb-…` expected), leaves it out, and
 * then any entry that is not valid without it (a channel section, a profile), innermost first,
 * until only problems elsewhere remain; those parseConfig then reports as usual.
 */
function leaveOutUnresolved(raw: object, paths: ReadonlyArray<readonly string[]>): void {
  const left = new Set<string>();
  for (let round = 0; round < 16; round++) {
    const result = configSchema.safeParse(raw);
    if (result.success) return;
    const drops: string[][] = [];
    for (const issue of result.error.issues) {
      const at = issue.path.map(String);
      const under = (a: readonly string[], b: readonly string[]) => a.every((k, i) => b[i] === k);
      const u = paths.find((p) => under(p, at) || under(at, p));
      if (!u) continue; // a problem of its own: parseConfig reports it
      let drop = at.length >= u.length ? [...u] : at;
      while (drop.length > 0 && left.has(drop.join("."))) drop = drop.slice(0, -1);
      if (drop.length > 0) drops.push(drop);
    }
    if (drops.length === 0) return;
    for (const d of drops) {
      left.add(d.join("."));
      const parent = valueAt(raw, d.slice(0, -1));
      const key = d[d.length - 1] as string;
      if (Array.isArray(parent)) parent[Number(key)] = undefined;
      else if (typeof parent === "object" && parent !== null) delete (parent as Record<string, unknown>)[key];
    }
    // A list entry left out leaves a hole: close it.
    for (const d of drops) {
      const list = valueAt(raw, d.slice(0, -1));
      if (Array.isArray(list)) {
        const kept = list.filter((x) => x !== undefined);
        list.splice(0, list.length, ...kept);
      }
    }
  }
}

/**
 * Environment values are text; where the schema wants a number or a boolean and a substituted
 * value reads as one in YAML (`7420`, `0x1F`, `true`), it becomes one. Anything else stays
 * text, so `secret: ${WEBHOOK_SECRET}` with WEBHOOK_SECRET=12345678 is the string "12345678".
 */
function typeSubstitutedValues(raw: object, substituted: ReadonlyMap<string, string>, doc: Document): void {
  if (substituted.size === 0) return;
  const result = configSchema.safeParse(raw);
  if (result.success) return;
  for (const issue of result.error.issues) {
    if (issue.code !== "invalid_type") continue;
    const text = substituted.get(issue.path.map(String).join("."));
    const parent = valueAt(raw, issue.path.slice(0, -1));
    const key = issue.path[issue.path.length - 1];
    if (text === undefined || key === undefined || typeof parent !== "object" || parent === null) continue;
    const typed = yamlScalar(text.trim(), doc);
    if (typeof typed === issue.expected) (parent as Record<PropertyKey, unknown>)[key] = typed;
  }
}

/**
 * Validates an already-parsed object. `modules` (default the registry's) are the channel modules
 * whose sections `channels` may hold: a test that adds a channel module passes its own set.
 */
export function parseConfig(raw: unknown, file: string | undefined, modules?: ChannelModules): Config {
  const schema = modules ? buildConfigSchema(modules) : configSchema;
  const result = schema.safeParse(raw) as ReturnType<typeof configSchema.safeParse>;
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

/** `$${` (an escaped, literal `${`) or `${VAR}` / `${VAR:-default}`. */
const ENV_REF = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

interface SubstituteContext {
  env: NodeJS.ProcessEnv;
  issues: string[];
  lineCounter: LineCounter;
  /** Key path → value after substitution, for every value that had a `${...}`. */
  substituted: Map<string, string>;
  /** Lenient: unset variables are collected here (their text kept) instead of being issues. */
  unresolved: Unresolved[] | undefined;
}

/**
 * Replaces `${VAR}` and `${VAR:-default}` in every string scalar under `node`, in place; keys
 * are never touched. An unset (or empty) variable without a default is an issue naming the key
 * path and the line.
 */
function substituteEnv(node: unknown, path: string[], ctx: SubstituteContext): void {
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      checkExact(pair.key, [...path, key], ctx);
      substituteEnv(pair.value, [...path, key], ctx);
    }
  } else if (isSeq(node)) {
    for (const [index, item] of node.items.entries()) substituteEnv(item, [...path, String(index)], ctx);
  } else if (isScalar(node) && typeof node.value === "string") {
    const original = node.value;
    const where = path.join(".") || "(top level)";
    const line = node.range ? ctx.lineCounter.linePos(node.range[0]).line : undefined;
    const replaced = original.replace(
      ENV_REF,
      (match: string, name: string | undefined, fallback: string | undefined) => {
        if (name === undefined) return "${"; // `$${` escape
        const value = ctx.env[name];
        if (value !== undefined && value !== "") return value;
        if (fallback !== undefined) return fallback;
        if (ctx.unresolved) {
          ctx.unresolved.push({ name, path });
          return match;
        }
        ctx.issues.push(
          `${where}: environment variable ${name} is not set (used as ${match}${line ? ` on line ${line}` : ""})`,
        );
        return "";
      },
    );
    if (replaced === original) return;
    node.value = replaced;
    ctx.substituted.set(path.join("."), replaced);
  } else checkExact(node, path, ctx);
  // Aliases need nothing: they resolve to their anchor's node, substituted where it stands.
}

/**
 * An unquoted integer too large for a JavaScript number (a Discord id) silently changes when
 * read: it is an issue asking for quotes.
 */
function checkExact(node: unknown, path: string[], ctx: SubstituteContext): void {
  if (!isScalar(node) || typeof node.value !== "number" || Number.isSafeInteger(node.value)) return;
  if (!Number.isInteger(node.value) || !/^[+-]?\d+$/.test(node.source ?? "")) return;
  const line = node.range ? ctx.lineCounter.linePos(node.range[0]).line : undefined;
  ctx.issues.push(
    `${path.join(".") || "(top level)"}: the number ${node.source}${line ? ` on line ${line}` : ""} is too large to read exactly; write it in quotes ("${node.source}")`,
  );
}

/** The value an unquoted scalar `value` has in the document's schema (null, bool, int, float), else `value`. */
function yamlScalar(value: string, doc: Document): unknown {
  for (const tag of doc.schema.tags) {
    if ("collection" in tag && tag.collection) continue;
    if (!tag.default || !tag.test?.test(value)) continue;
    const resolved: unknown = tag.resolve(value, () => {}, {});
    return isScalar(resolved) ? resolved.value : resolved;
  }
  return value;
}

function formatIssue(issue: z.core.$ZodIssue, raw: unknown): string {
  const path = issue.path.map(String).join(".") || "(top level)";
  if (issue.code === "unrecognized_keys") {
    const where = issue.path.length > 0 ? `${path}.` : "";
    return issue.keys
      .map((key) => `${where}${key}: unknown key (not part of the configuration; check the spelling)`)
      .join("\n  - ");
  }
  // A cross-field rule whose message names the values itself (they may be defaults).
  if (issue.code === "custom" && issue.params?.namesValues === true) return `${path}: ${issue.message}`;
  const last = String(issue.path[issue.path.length - 1] ?? "");
  // Never echo secrets back in an error message (apiKey, token, webhook.secret, ...).
  const found = /(?:key|token|secret|password)$/i.test(last)
    ? "a value (hidden)"
    : describeValue(valueAt(raw, issue.path));
  let expected = issue.message;
  if (issue.code === "invalid_type") expected = `expected ${issue.expected}`;
  else if (issue.code === "invalid_value")
    expected = `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
  else if (issue.code === "too_small" || issue.code === "too_big") {
    // A message the schema wrote itself ("expected a bot token …") says more than a bare bound.
    if (!issue.message.startsWith("expected ")) {
      const small = issue.code === "too_small";
      const bound = small ? issue.minimum : issue.maximum;
      const words = small ? ["at least", "more than"] : ["at most", "less than"];
      expected = `expected ${issue.inclusive === false ? words[1] : words[0]} ${String(bound)}${unitOf(issue.origin, last, Number(bound))}`;
    }
  }
  return `${path}: found ${found}, ${expected}`;
}

/** A number's unit, by the suffix of its key (`everyMs`, `maxFileMb`, `maxMessageChars`). */
const UNITS: ReadonlyArray<[RegExp, string]> = [
  [/Ms$/, "ms"],
  [/Mb$/, "MB"],
  [/Chars$/, "characters"],
  [/Seconds$/, "seconds"],
  [/Minutes$/, "minutes"],
  [/Hours$/, "hours"],
  [/Tokens(PerRun)?$/, "tokens"],
  [/Usd$/, "USD"],
];

/** ` ms`, ` characters`, ` entries`, …: what a bound on `key` counts; "" when it is a plain number. */
function unitOf(origin: string, key: string, bound: number): string {
  if (origin === "string") return bound === 1 ? " character" : " characters";
  if (origin === "array" || origin === "set") return bound === 1 ? " entry" : " entries";
  const unit = UNITS.find(([pattern]) => pattern.test(key))?.[1];
  return unit ? ` ${unit}` : "";
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
