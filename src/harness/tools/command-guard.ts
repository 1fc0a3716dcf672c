/**
 * The destructive command blocker (issue #24 item 3): `checkCommand` reads a shell command the
 * agent wants to run and either allows it (silently) or blocks it with the id of the rule it
 * broke and one paragraph saying what it would do and what to do instead. The rules are a table
 * in command-guard-rules.ts; this file reads the shell text (shell-parse.ts), strips wrappers
 * (`sudo`, `env X=Y`, `command`, `nice`, …), follows `cd`, looks one level or more into
 * `sh -c '…'`, `eval`, `$(…)`, backticks and `<(…)`, and resolves paths against the workspace.
 * It cannot see through symlinks, variables other than HOME, or scripts in files: a guard,
 * not a sandbox (bwrap is the sandbox).
 */
import path from "node:path";
import { SHELLS } from "./command-args.js";
import { COMMAND_GUARD_RULES } from "./command-guard-rules.js";
import { type SimpleCommand, parseShell } from "./shell-parse.js";

/** What checkCommand decided. A block names a stable rule id and one paragraph of reason. */
export type CommandVerdict = { type: "allow" } | { type: "block"; rule: string; reason: string };

/**
 * Told of every verdict checkCommand gave a tool's command, with the time it took (the hooks
 * capability records them as the built-in first beforeToolCall hook). Must not throw.
 */
export type CommandGuardObserver = (verdict: CommandVerdict, durationMs: number) => void;

/** Where a command runs. */
export interface CommandGuardContext {
  /** Absolute path of the agent workspace: recursive deletes are allowed only inside it. */
  workspaceDir: string;
  /** Absolute path that `~` and `$HOME` stand for. */
  homeDir: string;
  /** Absolute directory the command starts in; relative paths resolve against it. Default: workspaceDir. */
  cwd?: string;
}

/** Where a resolved path lies relative to the workspace. */
export type PathPlace = "workspace-root" | "inside" | "outside";

/**
 * One simple command as the rules see it. `argv` has wrappers and assignments stripped and its
 * first word reduced to a basename (`sudo env X=1 /bin/rm -rf /` → `["rm", "-rf", "/"]`).
 */
export interface CommandSite {
  argv: readonly string[];
  command: SimpleCommand;
  /** Every command of its pipeline (itself included, at `index`). */
  pipeline: readonly CommandSite[];
  index: number;
  workspaceDir: string;
  homeDir: string;
  /** The absolute path a word names, or null when it cannot be known (a variable, a substitution, `~user`, an unknown cwd). */
  resolve(word: string): string | null;
  /** Where an absolute path lies relative to the workspace. */
  place(abs: string): PathPlace;
  /** Rules that look into the commands a substitution of this command runs (e.g. `sh -c "$(curl …)"`). */
  substitutionArgvs(): readonly (readonly string[])[];
}

/**
 * One rule of the table. `check` sees each simple command; `checkScript` sees the text of each
 * script (the whole command, and each nested `sh -c` / substitution text). Each returns the
 * block's reason, or null.
 */
export interface CommandGuardRule {
  /** Stable id, e.g. `rm-recursive-outside-workspace`; a block reports it. */
  id: string;
  /** One line for the README's guard table. */
  summary: string;
  /** A command it blocks, and a near miss it lets through (README and tests). */
  example: { blocked: string; allowed: string };
  check?(site: CommandSite): string | null;
  checkScript?(text: string): string | null;
}

const ALLOW: CommandVerdict = { type: "allow" };
/** How deep `sh -c "$(… bash -c '…')"` is followed; each level is shorter than the last. */
const MAX_DEPTH = 3;
const RESERVED = new Set(["!", "{", "}", "if", "then", "else", "elif", "do", "while", "until", "time"]);
const INERT = new Set(["fi", "done", "esac", "for", "case", "select", "function", "in"]);

/**
 * Wrappers that run the rest of their words as a command, with their options that take a value
 * and how many plain words they take before the command (`timeout 10 cmd`).
 */
const WRAPPERS: Record<string, { withArg: readonly string[]; positional?: number }> = {
  sudo: { withArg: ["-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U", "-D", "-R", "-T"] },
  doas: { withArg: ["-u", "-C"] },
  env: { withArg: ["-u", "-C", "-S"] },
  command: { withArg: [] },
  builtin: { withArg: [] },
  exec: { withArg: ["-a"] },
  nohup: { withArg: [] },
  nice: { withArg: ["-n"] },
  time: { withArg: ["-f", "-o"] },
  timeout: { withArg: ["-s", "-k"], positional: 1 },
  stdbuf: { withArg: ["-i", "-o", "-e"] },
  ionice: { withArg: ["-c", "-n", "-p"] },
  busybox: { withArg: [] },
  xargs: { withArg: ["-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a"] },
};

/**
 * Decides whether an agent may run `command` (shell text, as `/bin/sh -c` would get it).
 * Allow is `{ type: "allow" }` and nothing else; a block carries the first broken rule's id
 * and reason. Pure and synchronous; a few microseconds for a typical command.
 */
export function checkCommand(command: string, ctx: CommandGuardContext): CommandVerdict {
  const env: Env = {
    workspaceDir: path.resolve(ctx.workspaceDir),
    homeDir: path.resolve(ctx.homeDir),
  };
  return checkScript(command, env, ctx.cwd === undefined ? env.workspaceDir : path.resolve(ctx.cwd), 0);
}

interface Env {
  workspaceDir: string;
  homeDir: string;
}

function checkScript(text: string, env: Env, startCwd: string | null, depth: number): CommandVerdict {
  for (const rule of COMMAND_GUARD_RULES) {
    const reason = rule.checkScript?.(text) ?? null;
    if (reason !== null) return { type: "block", rule: rule.id, reason };
  }
  let cwd = startCwd;
  const commands = parseShell(text);
  const sites: CommandSite[] = [];
  const byPipeline = new Map<number, CommandSite[]>();
  for (const command of commands) {
    const argv = unwrap(command.words);
    const members = byPipeline.get(command.pipeline) ?? [];
    byPipeline.set(command.pipeline, members);
    const site = makeSite(argv, command, members, env, cwd);
    members.push(site);
    sites.push(site);
    if (argv[0] === "cd" || argv[0] === "pushd") {
      const target = argv.slice(1).find((w) => !w.startsWith("-"));
      cwd = target === undefined ? env.homeDir : site.resolve(target);
    }
    if (depth < MAX_DEPTH) {
      for (const nested of nestedScripts(argv, command)) {
        const verdict = checkScript(nested, env, cwd, depth + 1);
        if (verdict.type === "block") return verdict;
      }
    }
  }
  for (const site of sites) {
    for (const rule of COMMAND_GUARD_RULES) {
      const reason = rule.check?.(site) ?? null;
      if (reason !== null) return { type: "block", rule: rule.id, reason };
    }
  }
  return ALLOW;
}

/** Scripts a command runs besides itself: its substitutions, `sh -c` text, `eval` words. */
function nestedScripts(argv: readonly string[], command: SimpleCommand): string[] {
  const scripts = [...command.substitutions];
  const name = argv[0];
  if (name === "eval") scripts.push(argv.slice(1).join(" "));
  if (name !== undefined && SHELLS.has(name)) {
    let sawC = false;
    const args = argv.slice(1);
    for (let i = 0; i < args.length; i++) {
      const word = args[i]!;
      if (word === "-o" || word === "-O" || word === "+o" || word === "+O") i++;
      else if (word.startsWith("-") && !word.startsWith("--")) {
        if (word.slice(1).includes("c")) sawC = true;
      } else if (!word.startsWith("-")) {
        if (sawC) scripts.push(word);
        break;
      }
    }
  }
  return scripts;
}

function makeSite(
  argv: string[],
  command: SimpleCommand,
  pipeline: CommandSite[],
  env: Env,
  cwd: string | null,
): CommandSite {
  return {
    argv,
    command,
    pipeline,
    index: pipeline.length,
    workspaceDir: env.workspaceDir,
    homeDir: env.homeDir,
    resolve: (word) => resolveWord(word, env.homeDir, cwd),
    place: (abs) => placeOf(abs, env.workspaceDir),
    substitutionArgvs: () =>
      command.substitutions.flatMap((inner) => parseShell(inner).map((c) => unwrap(c.words))),
  };
}

/** Strips assignments, reserved words and wrappers; the first word becomes a basename. */
export function unwrap(words: readonly string[]): string[] {
  let i = 0;
  for (let guard = 0; guard < 16 && i < words.length; guard++) {
    while (i < words.length && (isAssignment(words[i]!) || RESERVED.has(words[i]!))) i++;
    const name = path.posix.basename(words[i] ?? "");
    if (INERT.has(name)) return [];
    const wrapper = WRAPPERS[name];
    if (wrapper === undefined) break;
    i++;
    while (i < words.length && words[i]!.startsWith("-") && words[i] !== "-") {
      const option = words[i]!;
      i++;
      if (option === "--") break;
      if (wrapper.withArg.includes(option)) i++;
    }
    i += wrapper.positional ?? 0;
  }
  const rest = words.slice(i);
  if (rest.length > 0) rest[0] = path.posix.basename(rest[0]!);
  return rest;
}

function isAssignment(word: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*=/.test(word);
}

/** Resolves a word to an absolute path, or null when the shell would decide it at run time. */
function resolveWord(word: string, homeDir: string, cwd: string | null): string | null {
  let rest = word;
  let base = cwd;
  const home = /^(~|\$HOME\b|\$\{HOME\})(\/|$)/.exec(word);
  if (home !== null) {
    base = homeDir;
    rest = word.slice(home[1]!.length).replace(/^\//, "");
  } else if (word.startsWith("~")) return null;
  if (rest.includes("$") || rest.includes("`")) return null;
  if (rest.startsWith("/")) return path.posix.resolve(rest);
  if (base === null) return null;
  return path.posix.resolve(base, rest);
}

function placeOf(abs: string, workspaceDir: string): PathPlace {
  if (abs === workspaceDir) return "workspace-root";
  const prefix = workspaceDir.endsWith("/") ? workspaceDir : `${workspaceDir}/`;
  return abs.startsWith(prefix) ? "inside" : "outside";
}
