/**
 * Reading a command's arguments for the guard's rules (command-guard-rules.ts): options and
 * operands, the paths a command writes to or removes, whether a shell reads its program from
 * stdin, and git's subcommand past its global options.
 */
import type { CommandSite } from "./command-guard.js";

/** Parsed options of one command: short letters, long names, option values and operands. */
export interface Args {
  short: Set<string>;
  long: Set<string>;
  values: Map<string, string>;
  operands: string[];
}

/** Splits `args` into options and operands; `withArg` options (`-t`, `--target-directory`) take a value. */
export function parseArgs(args: readonly string[], withArg: readonly string[] = []): Args {
  const out: Args = { short: new Set(), long: new Set(), values: new Map(), operands: [] };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") {
      out.operands.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      out.long.add(name);
      if (eq >= 0) out.values.set(`--${name}`, a.slice(eq + 1));
      else if (withArg.includes(`--${name}`)) out.values.set(`--${name}`, args[++i] ?? "");
    } else if (a.startsWith("-") && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const flag = `-${a[j]}`;
        out.short.add(a[j]!);
        if (withArg.includes(flag)) {
          out.values.set(flag, j + 1 < a.length ? a.slice(j + 1) : (args[++i] ?? ""));
          break;
        }
      }
    } else out.operands.push(a);
  }
  return out;
}

const WRITE_REDIRECTS = new Set([">", ">>", ">|", "&>", "&>>", "<>", ">&"]);

/** Absolute paths a command writes to or removes, as far as its arguments show. */
export function writtenPaths(site: CommandSite): string[] {
  const targets: string[] = [];
  for (const r of site.command.redirects) {
    if (WRITE_REDIRECTS.has(r.op) && !/^(\d+|-)$/.test(r.target)) targets.push(r.target);
  }
  const [name = "", ...args] = site.argv;
  if (name === "dd") {
    for (const a of args) if (a.startsWith("of=")) targets.push(a.slice(3));
  } else if (["tee", "rm", "rmdir", "unlink", "touch", "mkdir", "shred", "mv"].includes(name)) {
    targets.push(...parseArgs(args).operands);
  } else if (name === "truncate") {
    targets.push(...parseArgs(args, ["-s", "-r", "--size", "--reference"]).operands);
  } else if (["chmod", "chown", "chgrp"].includes(name)) {
    const a = parseArgs(args);
    targets.push(...a.operands.slice(a.long.has("reference") ? 0 : 1));
  } else if (["cp", "install", "ln", "rsync", "scp"].includes(name)) {
    const a = parseArgs(args, ["-t", "--target-directory", "-S", "-m", "-o", "-g", "-e"]);
    const dir = a.values.get("-t") ?? a.values.get("--target-directory");
    const last = a.operands.at(-1);
    if (dir !== undefined) targets.push(dir);
    else if (last !== undefined && a.operands.length > 1) targets.push(last);
  } else if (name === "sed" || name === "perl") {
    const a = parseArgs(args, ["-e", "-f", "--expression", "--file"]);
    const inPlace = a.short.has("i") || a.long.has("in-place");
    const scripted = a.values.has("-e") || a.values.has("-f") || a.values.has("--expression");
    if (inPlace) targets.push(...a.operands.slice(scripted || name === "perl" ? 0 : 1));
  }
  return targets.flatMap((t) => site.resolve(t) ?? []);
}

/** Programs that run shell text. */
export const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"]);
/** Interpreters that run a program read from stdin when given none. */
export const INTERPRETERS = new Set(["python", "python3", "perl", "ruby", "node", "php"]);

/** Whether a shell or interpreter takes its program from stdin (`sh`, `bash -s`, `python3 -`). */
export function runsStdin(argv: readonly string[]): boolean {
  const [name = "", ...args] = argv;
  if (!SHELLS.has(name) && !INTERPRETERS.has(name)) return false;
  const a = parseArgs(args, ["-o", "-O"]);
  if (a.short.has("c") || a.short.has("e") || a.short.has("m") || a.long.has("eval")) return false;
  return a.short.has("s") || a.operands.length === 0 || a.operands[0] === "-";
}

/** `git`'s subcommand and its arguments, past global options (`git -C dir push`). */
export function gitCommand(argv: readonly string[]): string[] {
  if (argv[0] !== "git") return [];
  let i = 1;
  while (i < argv.length && argv[i]!.startsWith("-")) i += ["-C", "-c"].includes(argv[i]!) ? 2 : 1;
  return argv.slice(i);
}
