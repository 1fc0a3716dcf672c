/**
 * The `switchyard` command line: gateway, chat, status, doctor, pairing, sessions, auth, usage,
 * logs, memory, ui, cron, task, learnings, tools, mcp, hooks, help.
 * Returns the process exit code: 0 ok, 1 failure, 2 bad usage or bad configuration.
 */
import { parseArgs } from "node:util";

import { type GatewayStarter, runGatewayCommand } from "./gateway-command.js";
import { joinNegativeValues } from "./join-negative-values.js";
import { plainArgsError } from "./parse-args-error.js";
import { runSubcommand } from "./subcommand.js";
import { packageVersion } from "./version.js";

const USAGE = `usage: switchyard <command> [options]

commands:
  gateway   run the gateway daemon (default port 7420 on 127.0.0.1)
  chat      chat with the running gateway from this terminal
  status    show queues, runs and undelivered replies of the running gateway
  doctor    check configuration, home folder, database, providers and channels
  pairing   list | approve <channel> <CODE> | revoke <channel> <SENDER_ID>: who may DM the agent
            (list: pending codes and approved senders)
  sessions  list | show <key> [--last N]: sessions by recent activity, or one session's transcript
  auth      status | reset <provider> <profile>: each API key's health (cooldown, failures, use today),
            or clear a profile's cooldown
  usage     tokens and cost of model calls [--by day|session|model|origin|profile] [--since 7d]
  logs      print the gateway log, <home>/logs/switchyard.log (older: .1, .2, …) [--last N] [-f]
  memory    search <query> [--limit N]: search the agent's MEMORY.md and memory/ notes
  cron      add | list | show | edit | rm | enable | disable | run | history: scheduled jobs
            (switchyard cron help for their options)
  task      add "<goal>" | list | show <id> | cancel <id> | answer <id> "<text>": assignments,
            long work the agent carries over many runs (switchyard task help for the options)
  learnings list | promote <id> | drop <id>: lessons agents reported, and MEMORY.md's ## Learned
  tools     list [--channel C] [--group] [--json]: what a turn there is offered (tools: policy)
  mcp       list [--json]: each MCP server (mcp.servers), started once: its state and tools
  hooks     list [--json]: each hook by event (built-in command guard first), its last outcome
  db        status [--json] | migrate | copy --from sqlite --to postgres: the store (SQLite or
            PostgreSQL, store.engine), its schema version against this binary's, bringing it up to
            date, and moving a home's SQLite state into an empty PostgreSQL database
  ui        print the control page's address for the running gateway (--open: open it too)
  help      show this text
  version   print the version (also --version)

common options:
  --config PATH   configuration file (default ./switchyard.yaml, or SWITCHYARD_CONFIG)
  --home DIR      state folder: database, workspace, logs (default ~/.switchyard, or SWITCHYARD_HOME)
  --port N        gateway port (gateway: listen on it; chat/status/doctor: connect to it)
  --url URL       gateway URL for chat/status/doctor (default: the gateway running with
                  this home folder, as <home>/gateway.json says, else gateway.port)
  --sender NAME   your name in chat (default $USER)
  --json          status, sessions, pairing list, auth status, usage, memory search as JSON
  --last N        sessions show: the last N events (default 50); logs: the last N lines (default 100)
  -f, --follow    logs: keep printing new lines, across rotations, until Ctrl-C
  --open          ui: open the control page in the default browser too
  --limit N       memory search: the best N matches (default 10)
  --by KEY        usage: group by day (default), session, model, origin or profile
  --since WHEN    usage: calls from this long ago (7d, 12h, 30m; default 7d) or this date
                  (2024-01-15 is 00:00 UTC; 2024-01-15T09:00 is local time)
`;

/** Options shared by the commands. */
export interface CliOptions {
  config?: string;
  home?: string;
  port?: number;
  url?: string;
  sender?: string;
  json: boolean;
  logLevel?: string;
  /** `--last N`: how many events (sessions show) or lines (logs); the command applies its default. */
  last?: number;
  /** `-f`/`--follow` (logs); default false. */
  follow?: boolean;
  /** `--limit N` (memory search): how many matches; the command applies its default. */
  limit?: number;
  /** `--by` (usage), as given; the command checks it and applies its default. */
  by?: string;
  /** `--since` (usage), as given; the command checks it and applies its default. */
  since?: string;
  /** `--open` (ui): also open the page in the browser; default false. */
  open?: boolean;
}

/** What the CLI is given by the entry point (src/main.ts). */
export interface CliDeps {
  startGateway: GatewayStarter;
}

let stdoutWatched = false;

/**
 * A reader that went away (`switchyard logs | head`) ends a command quietly with exit 0, as
 * Unix tools do, instead of an unhandled EPIPE and a stack trace.
 */
function endQuietlyWhenStdoutCloses(): void {
  if (stdoutWatched) return;
  stdoutWatched = true;
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(0);
    process.stderr.write(`switchyard: cannot write the output: ${err.message}\n`);
    process.exit(1);
  });
}

/** Runs one command; resolves with the process exit code. */
export async function runCli(argv: string[], deps: CliDeps): Promise<number> {
  // The daemon's output is its log, never a pipe's reader: only the other commands end this way.
  if (argv[0] !== "gateway") endQuietlyWhenStdoutCloses();
  // `cron` has options of its own (--name, --cron, --every, …): it parses its arguments itself.
  // Each goes through runSubcommand (src/cli/subcommand.ts), which sets every exit code.
  if (argv[0] === "cron") return (await import("./cron.js")).runCron(argv.slice(1));
  // So do `task` (--deliver, --require-file, …) and `learnings`.
  if (argv[0] === "task") return (await import("./task.js")).runTask(argv.slice(1));
  if (argv[0] === "learnings") return (await import("./learnings.js")).runLearnings(argv.slice(1));
  if (argv[0] === "tools") return (await import("./tools.js")).runTools(argv.slice(1));
  if (argv[0] === "mcp") return (await import("./mcp.js")).runMcp(argv.slice(1));
  if (argv[0] === "hooks") return (await import("./hooks.js")).runHooks(argv.slice(1));
  if (argv[0] === "db") return (await import("./db.js")).runDb(argv.slice(1));
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    // One plain line, then the usage line of the command named first (not the whole help).
    process.stderr.write(`switchyard: ${plainArgsError(err)}\n${usageLine(argv[0])}\n`);
    return 2;
  }
  const { command, options } = parsed;
  // A command with actions names the action in its messages: `switchyard auth reset: …`.
  const action = parsed.args[0];
  const name = command && action && WITH_ACTIONS.has(command) ? `${command} ${action}` : command;
  return runSubcommand(name, async () => {
    // Each command's module is loaded when it runs: the gateway's start-up pays for no other.
    switch (command) {
      case "gateway":
        return await runGatewayCommand(options, deps.startGateway);
      case "chat":
        return await (await import("./chat.js")).runChat(options);
      case "status":
        return await (await import("./status.js")).runStatus(options);
      case "doctor":
        return await (await import("./doctor.js")).runDoctor(options);
      case "pairing":
        return await (await import("./pairing.js")).runPairing(options, parsed.args);
      case "sessions":
        return await (await import("./sessions.js")).runSessions(options, parsed.args);
      case "auth":
        return await (await import("./auth.js")).runAuth(options, parsed.args);
      case "usage":
        return await (await import("./usage.js")).runUsage(options);
      case "logs":
        return await (await import("./logs.js")).runLogs(options);
      case "memory":
        return await (await import("./memory.js")).runMemory(options, parsed.args);
      case "ui":
        return await (await import("./ui.js")).runUi(options);
      case "version":
        process.stdout.write(`switchyard ${packageVersion()}\n`);
        return 0;
      case "help":
      case undefined:
        process.stdout.write(USAGE);
        return command ? 0 : 2;
      default:
        process.stderr.write(`switchyard: unknown command "${command}"\n${usageLine(undefined)}\n`);
        return 2;
    }
  });
}

/** Each command's own usage line, printed after a bad option (`switchyard help` has them all). */
const COMMAND_USAGE: Readonly<Record<string, string>> = {
  gateway: "switchyard gateway [--config PATH] [--home DIR] [--port N] [--log-level LEVEL]",
  chat: "switchyard chat [--url URL | --port N] [--sender NAME] [--config PATH] [--home DIR]",
  status: "switchyard status [--json] [--url URL | --port N] [--config PATH] [--home DIR]",
  doctor: "switchyard doctor [--url URL | --port N] [--config PATH] [--home DIR]",
  pairing: "switchyard pairing list [--json] | approve <channel> <CODE> | revoke <channel> <SENDER_ID>",
  sessions: "switchyard sessions list [--json] | show <key> [--last N] [--json]",
  auth: "switchyard auth status [--json] | reset <provider> <profile>",
  usage: "switchyard usage [--by day|session|model|origin|profile] [--since 7d] [--json]",
  logs: "switchyard logs [--last N] [-f]",
  memory: "switchyard memory search <query> [--limit N] [--json]",
  ui: "switchyard ui [--open] [--url URL | --port N] [--config PATH] [--home DIR]",
};

/** `usage: …` for `command` (every command's options: switchyard help); the general line otherwise. */
function usageLine(command: string | undefined): string {
  const own = command === undefined ? undefined : COMMAND_USAGE[command];
  return own
    ? `usage: ${own} (every option: switchyard help)`
    : "usage: switchyard <command> [options] (switchyard help lists the commands)";
}

/** Commands whose first argument is an action (list, show, approve, …). */
const WITH_ACTIONS: ReadonlySet<string> = new Set(["pairing", "sessions", "auth", "memory"]);

/** Arguments after the command name each command takes at most (none unless listed). */
const MAX_ARGS: ReadonlyMap<string, number> = new Map([
  ["pairing", 3],
  ["sessions", 2],
  ["auth", 3],
  // memory search takes the words of its query unquoted.
  ["memory", 64],
]);

function parse(argv: string[]): { command: string | undefined; args: string[]; options: CliOptions } {
  const { values, positionals } = parseArgs({
    args: joinNegativeValues(argv),
    allowPositionals: true,
    strict: true,
    options: {
      config: { type: "string" },
      home: { type: "string" },
      port: { type: "string" },
      url: { type: "string" },
      sender: { type: "string" },
      json: { type: "boolean", default: false },
      "log-level": { type: "string" },
      last: { type: "string" },
      limit: { type: "string" },
      follow: { type: "boolean", short: "f", default: false },
      open: { type: "boolean", default: false },
      by: { type: "string" },
      since: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
      version: { type: "boolean", default: false },
    },
  });
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) {
      throw new Error(`--port: found "${values.port}", expected a whole number from 0 to 65535`);
    }
  }
  let last: number | undefined;
  if (values.last !== undefined) {
    last = Number(values.last);
    if (!Number.isInteger(last) || last < 1) {
      throw new Error(`--last: found "${values.last}", expected a whole number of at least 1`);
    }
  }
  let limit: number | undefined;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1) {
      throw new Error(`--limit: found "${values.limit}", expected a whole number of at least 1`);
    }
  }
  if (values.url !== undefined && !/^https?:\/\/[^/?#\s]+/i.test(values.url)) {
    throw new Error(`--url: found "${values.url}", expected an http:// or https:// URL of the gateway`);
  }
  const maxArgs = MAX_ARGS.get(positionals[0] ?? "") ?? 0;
  if (positionals.length > maxArgs + 1) throw new Error(`unexpected argument "${positionals[maxArgs + 1]}"`);
  return {
    command: values.help ? "help" : values.version ? "version" : positionals[0],
    args: positionals.slice(1),
    options: {
      ...(values.config !== undefined ? { config: values.config } : {}),
      ...(values.home !== undefined ? { home: values.home } : {}),
      ...(port !== undefined ? { port } : {}),
      ...(values.url !== undefined ? { url: values.url } : {}),
      ...(values.sender !== undefined ? { sender: values.sender } : {}),
      ...(values["log-level"] !== undefined ? { logLevel: values["log-level"] } : {}),
      ...(last !== undefined ? { last } : {}),
      ...(limit !== undefined ? { limit } : {}),
      ...(values.by !== undefined ? { by: values.by } : {}),
      ...(values.since !== undefined ? { since: values.since } : {}),
      json: values.json ?? false,
      follow: values.follow ?? false,
      open: values.open ?? false,
    },
  };
}
