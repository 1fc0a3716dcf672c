/**
 * Helpers for CLI tests that need the test process's event loop while the CLI runs (an
 * in-process fake server answering it): the CLI is spawned asynchronously from source (or kept
 * running with its stdin open, as a person at a terminal), and a home folder can be seeded with
 * an undelivered (dead) reply.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";

const ROOT = resolve(import.meta.dirname, "../..");
// An absolute loader URL: the CLI runs from temp folders that have no node_modules.
const TSX = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;

/** What a finished CLI run printed and returned. */
export interface CliResult {
  code: number | null;
  out: string;
  err: string;
}

/** Temp folders removed by {@link removeTempDirs}. */
const dirs: string[] = [];

/** A fresh temp folder. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sy-cli-"));
  dirs.push(dir);
  return dir;
}

/** Removes every folder {@link tempDir} made (call in afterAll). */
export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * Runs `switchyard <args>` from source in `cwd` with only PATH, HOME and `env`; kills it after
 * `timeoutMs`. `input` is written to its stdin, which then ends (default: no stdin at all).
 */
export function runCli(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string } = {},
): Promise<CliResult> {
  const cwd = options.cwd ?? tempDir();
  const child = spawn(process.execPath, ["--import", TSX, join(ROOT, "test/helpers/cli-entry.ts"), ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: cwd, ...options.env },
    stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
  });
  if (options.input !== undefined) child.stdin?.end(options.input);
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  return new Promise((done) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 30_000);
    child.once("close", (code) => {
      clearTimeout(timer);
      done({ code, out, err });
    });
  });
}

/** A CLI run that is still going: its output so far, its stdin, and its exit. */
export interface LiveCli {
  out(): string;
  err(): string;
  /** Writes to its stdin. */
  type(text: string): void;
  /** Ends its stdin (Ctrl-D) and resolves with the exit code. */
  end(): Promise<number | null>;
  /** Resolves with the exit code once it exits. */
  exited: Promise<number | null>;
}

/**
 * Starts `switchyard <args>` from source as {@link runCli} does, with stdin kept open for
 * {@link LiveCli.type}; killed after `timeoutMs` (default 60 s) if still running.
 */
export function startCli(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): LiveCli {
  const cwd = options.cwd ?? tempDir();
  const child = spawn(process.execPath, ["--import", TSX, join(ROOT, "test/helpers/cli-entry.ts"), ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: cwd, ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
  const exited = new Promise<number | null>((done) =>
    child.once("close", (code) => {
      clearTimeout(timer);
      done(code);
    }),
  );
  return {
    out: () => out,
    err: () => err,
    type: (text) => child.stdin?.write(text),
    end: () => {
      child.stdin?.end();
      return exited;
    },
    exited,
  };
}

/** A port nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

/** The pid of a process that has exited (`node -e ''`, waited for): not alive. */
export async function exitedPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((done) => child.once("exit", done));
  if (child.pid === undefined) throw new Error("exitedPid: no pid");
  return child.pid;
}

/** Writes one reply to a Telegram chat that could not be delivered (state dead) into `home`'s database. */
export async function seedDeadReply(home: string, text: string, error: string): Promise<void> {
  const store = openSqliteStore({ path: join(home, "switchyard.db") });
  try {
    const now = Date.now();
    const sessionKey = "agent:main:telegram:dm:42";
    const { record } = await store.inbox.receive(
      {
        channel: "telegram",
        accountId: "default",
        chatId: "42",
        senderId: "42",
        senderName: "Ann",
        isDirect: true,
        mentionsBot: true,
        text: "hello",
        attachments: [],
        platformMessageId: "pm-1",
        receivedAt: now,
      },
      sessionKey,
      now,
    );
    await store.inbox.markQueued(record.id, now);
    // Claimed and committed under a session lease, as a gateway does; given back afterwards.
    const lease = await store.leases.acquireSession(sessionKey, "gw_seed", now, 60_000);
    if (!lease) throw new Error("seedDeadReply: the session lease was refused");
    const [claimed] = await store.inbox.claim(sessionKey, "ses-1", "run-1", { all: false, lease }, now);
    if (!claimed) throw new Error("seedDeadReply: nothing claimed");
    await store.commitTurn(
      {
        sessionKey,
        sessionId: "ses-1",
        runId: "run-1",
        inboxIds: [claimed.id],
        inboxState: "answered",
        events: [{ type: "assistant", text, toolCalls: [] }],
        outbox: [
          {
            target: { channel: "telegram", accountId: "default", chatId: "42" },
            text,
            seq: 0,
            kind: "reply",
          },
        ],
        run: {
          runId: "run-1",
          sessionKey,
          trigger: "user",
          channel: "telegram",
          provider: "simulator",
          model: "sim",
          startedAt: now,
          durationMs: 1,
          outcome: "answered",
          usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
          toolCalls: 0,
          modelCalls: 1,
          errorKind: null,
          error: null,
          attempts: [],
          calls: [],
        },
        lease,
      },
      now,
    );
    await store.leases.releaseSession(sessionKey, lease.owner, lease.fence, now);
    for (const row of await store.outbox.claimDue(now, 10)) await store.outbox.markDead(row.id, error, now);
  } finally {
    store.close();
  }
}
