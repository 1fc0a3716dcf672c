/**
 * The command line of `npm run chaos`: parsed and checked once; a bad flag is a FlagError whose
 * one-line message names the flag, the value and what was expected (the run exits 2).
 */
import { channelNames } from "./platforms/registry.js";
import type { ChannelName } from "./types.js";

/** How to call it. */
export const USAGE =
  "usage: npm run chaos -- --channel telegram|slack|discord --kills N --messages M [--chats C (default 6)] [--seed S] [--json] [--reap-at-once] [--keep-home]";

/** The run's settings. */
export interface ChaosFlags {
  channel: ChannelName;
  /** SIGKILLs in all (0 for a run without kills). */
  kills: number;
  /** User messages in all, spread over the chats. */
  messages: number;
  /** Chats (DMs with different users); default 6. */
  chats: number;
  /** Seed of every random choice; default a random one (printed, to run it again). */
  seed: number;
  /** Print only the JSON summary. */
  json: boolean;
  /**
   * Let a killed gateway be reaped at once (a plain child of the driver). Default: it stays a
   * zombie until its successor listens, as under a parent that reaps late.
   */
  reapAtOnce: boolean;
  /** Keep the gateway's home (database, log) and print where it is. */
  keepHome: boolean;
}

/** A flag that is missing, unknown or has a bad value. */
export class FlagError extends Error {
  readonly code = "bad_flag";
  constructor(
    message: string,
    readonly flag: string,
  ) {
    super(message);
  }
}

/** Parses `argv` (the arguments after the script); throws FlagError. */
export function parseFlags(argv: readonly string[], randomSeed: () => number): ChaosFlags {
  const values = new Map<string, string>();
  const switches = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const [name, inline] = arg.startsWith("--") ? arg.split("=", 2) : [arg, undefined];
    if (name === "--json" || name === "--keep-home" || name === "--reap-at-once" || name === "--help") {
      switches.add(name);
      continue;
    }
    if (!["--channel", "--kills", "--messages", "--chats", "--seed"].includes(name ?? "")) {
      throw new FlagError(`unknown flag ${JSON.stringify(arg)}; ${USAGE}`, arg);
    }
    const value = inline ?? argv[++i];
    if (value === undefined || value.startsWith("--")) {
      throw new FlagError(`${name} needs a value; ${USAGE}`, name ?? arg);
    }
    values.set(name ?? arg, value);
  }
  if (switches.has("--help")) throw new FlagError(USAGE, "--help");
  const channel = values.get("--channel");
  if (channel === undefined)
    throw new FlagError(`--channel is required (${channelNames.join("|")})`, "--channel");
  if (!(channelNames as string[]).includes(channel)) {
    throw new FlagError(
      `--channel: got ${JSON.stringify(channel)}, expected ${channelNames.join(", ")}`,
      "--channel",
    );
  }
  return {
    channel: channel as ChannelName,
    kills: integer(values, "--kills", { min: 0, max: 1000 }),
    messages: integer(values, "--messages", { min: 1, max: 10_000 }),
    chats: integer(values, "--chats", { min: 1, max: 100, fallback: 6 }),
    seed: integer(values, "--seed", { min: 0, max: 0xffff_ffff, fallback: randomSeed() }),
    json: switches.has("--json"),
    reapAtOnce: switches.has("--reap-at-once"),
    keepHome: switches.has("--keep-home"),
  };
}

function integer(
  values: Map<string, string>,
  flag: string,
  range: { min: number; max: number; fallback?: number },
): number {
  const raw = values.get(flag);
  if (raw === undefined) {
    if (range.fallback !== undefined) return range.fallback;
    throw new FlagError(`${flag} is required (an integer from ${range.min} to ${range.max})`, flag);
  }
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < range.min || value > range.max) {
    throw new FlagError(
      `${flag}: got ${JSON.stringify(raw)}, expected an integer from ${range.min} to ${range.max}`,
      flag,
    );
  }
  return value;
}
