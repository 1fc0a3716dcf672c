/**
 * `switchyard auth status` and `auth reset`: each configured profile's health and use today from
 * a database seeded as a gateway writes it (while a store handle stays open, as a running
 * gateway's does), and a reset that clears a cooldown. No key ever reaches the output.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { AuthProfileState } from "../../src/store/repos/auth-profile-repo.js";
import { type CliResult, removeTempDirs, runCli, tempDir } from "./cli-process.js";
import { call, openHomeStore, seedRuns, tokens } from "./seed-usage.js";

afterAll(removeTempDirs);

const MIN = 60_000;
const HOUR = 60 * MIN;

/** Every key of the setup below contains this; no output may. */
const SECRET = "SECRET";

/**
 * Two Anthropic profiles (one key inline, one from ${PERSONAL_KEY}), OpenAI from its environment
 * variable, and a keyless Ollama server. In UTC, so local times are fixed.
 */
function setup(): { home: string; config: string; env: NodeJS.ProcessEnv } {
  const dir = tempDir();
  const config = join(dir, "switchyard.yaml");
  writeFileSync(
    config,
    [
      "providers:",
      "  anthropic:",
      "    profiles:",
      "      - id: work",
      "        apiKey: sk-ant-SECRET-123",
      "      - id: personal",
      "        apiKey: ${PERSONAL_KEY}",
      "  ollama:",
      "    type: openai",
      "    baseUrl: http://127.0.0.1:11434/v1",
      "",
    ].join("\n"),
  );
  return {
    home: join(dir, "home"),
    config,
    env: { TZ: "UTC", PERSONAL_KEY: "sk-ant-SECRET-456", OPENAI_API_KEY: "sk-SECRET-789" },
  };
}

function state(provider: string, profileId: string, over: Partial<AuthProfileState>): AuthProfileState {
  return {
    provider,
    profileId,
    consecutiveFailures: 0,
    cooldownUntil: null,
    cooldownReason: null,
    lastUsedAt: null,
    lastErrorKind: null,
    lastErrorAt: null,
    resetAt: null,
    ...over,
  };
}

/**
 * anthropic:work cooling after two rate limits, 4.5 min left; openai:default cooling for 3 h
 * with its key rejected; anthropic:personal used 20 min ago; anthropic:old no longer configured.
 * Calls today: two on work, one on personal; one on work yesterday.
 */
async function seed(home: string, now: number): Promise<void> {
  const startOfDay = now - (now % (24 * HOUR));
  await seedRuns(home, [
    {
      sessionKey: "agent:main:telegram:dm:42",
      trigger: "user",
      calls: [call(startOfDay - HOUR, "anthropic/claude-sonnet-4-5", "work", tokens(1_000_000, 1), 3)],
    },
    {
      sessionKey: "agent:main:telegram:dm:42",
      trigger: "user",
      calls: [
        call(now - 1_000, "anthropic/claude-sonnet-4-5", "work", tokens(12_000, 800, 30_000, 2_000), 0.06),
        call(now - 900, "anthropic/claude-sonnet-4-5", "work", tokens(3_000, 400), 0.02),
        call(now - 800, "anthropic/claude-sonnet-4-5", "personal", tokens(9_000, 150), 0.03),
      ],
    },
  ]);
  const store = openHomeStore(home);
  try {
    await store.authProfiles.save([
      state("anthropic", "work", {
        consecutiveFailures: 2,
        cooldownUntil: now + 4.5 * MIN,
        cooldownReason: "rate_limit",
        lastUsedAt: now - 3 * MIN,
        lastErrorKind: "rate_limit",
        lastErrorAt: now - MIN,
      }),
      state("anthropic", "personal", { lastUsedAt: now - 20 * MIN }),
      state("openai", "default", {
        consecutiveFailures: 1,
        cooldownUntil: now + 3 * HOUR,
        cooldownReason: "auth",
        lastUsedAt: now - 3 * MIN,
        lastErrorKind: "auth",
        lastErrorAt: now - 2 * MIN,
      }),
      state("anthropic", "old", { lastUsedAt: now - 5 * 24 * HOUR }),
    ]);
  } finally {
    await store.close();
  }
}

function expectNoKey(...results: CliResult[]): void {
  for (const r of results) {
    expect(r.out).not.toContain(SECRET);
    expect(r.err).not.toContain(SECRET);
    expect(r.out).not.toMatch(/apiKey"?:/);
  }
}

describe("switchyard auth status", () => {
  it("lists each configured profile's state, failures, last use and error, use today and key source, then the rest", async () => {
    const { home, config, env } = setup();
    await seed(home, Date.now());
    // The gateway's connection stays open meanwhile.
    const gateway = openHomeStore(home);
    try {
      const r = await runCli(["auth", "status", "--home", home, "--config", config], { env });
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      const lines = r.out.trimEnd().split("\n");
      expect(lines[0]).toMatch(
        /^PROVIDER\s+PROFILE\s+STATE\s+FAILURES\s+LAST USED\s+LAST ERROR\s+CALLS TODAY\s+TOKENS TODAY\s+KEY FROM$/,
      );
      const time = String.raw`(\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d`;
      expect(lines[1]).toMatch(
        new RegExp(
          String.raw`^anthropic\s+work\s+cooling until ${time} \(rate_limit, in (4|5) min\)\s+2\s+3 min ago\s+rate_limit \(1 min ago\)\s+2\s+48,200\s+providers\.anthropic\.profiles\[0\]$`,
        ),
      );
      expect(lines[2]).toMatch(
        /^anthropic\s+personal\s+ok\s+0\s+20 min ago\s+-\s+1\s+9,150\s+providers\.anthropic\.profiles\[1\]$/,
      );
      expect(lines[3]).toMatch(
        new RegExp(
          String.raw`^openai\s+default\s+cooling until ${time} \(auth, in (2 h 59 min|3 h)\)\s+1\s+3 min ago\s+auth \(2 min ago\)\s+0\s+0\s+OPENAI_API_KEY$`,
        ),
      );
      expect(lines[4]).toMatch(/^ollama\s+default\s+ok\s+0\s+never\s+-\s+0\s+0\s+no key \(keyless server\)$/);
      expect(lines[5]).toMatch(/^anthropic\s+old\s+ok\s+0\s+5 days ago\s+-\s+0\s+0\s+\(not configured\)$/);
      expect(lines.slice(6)).toEqual(["warning: openai:default: key rejected: check OPENAI_API_KEY"]);

      const json = await runCli(["auth", "--json", "--home", home, "--config", config], { env });
      expect(json.code).toBe(0);
      const body = JSON.parse(json.out) as {
        profiles: Array<{
          provider: string;
          profileId: string;
          source: string | null;
          configured: boolean;
          health: string;
          today: { calls: number; tokens: number; costUsd: number };
        }>;
        warnings: string[];
      };
      expect(body.profiles.map((p) => [p.provider, p.profileId, p.health, p.configured, p.source])).toEqual([
        ["anthropic", "work", "cooling", true, "providers.anthropic.profiles[0]"],
        ["anthropic", "personal", "ok", true, "providers.anthropic.profiles[1]"],
        ["openai", "default", "cooling", true, "OPENAI_API_KEY"],
        ["ollama", "default", "ok", true, "no key (keyless server)"],
        ["anthropic", "old", "ok", false, null],
      ]);
      expect(body.profiles[0]?.today).toEqual({ calls: 2, tokens: 48_200, costUsd: 0.08 });
      expect(body.warnings).toEqual(["openai:default: key rejected: check OPENAI_API_KEY"]);
      expectNoKey(r, json);
    } finally {
      await gateway.close();
    }
  });

  it("calls a profile whose cooldown ran out after failures failing", async () => {
    const { home, config, env } = setup();
    const now = Date.now();
    const store = openHomeStore(home);
    await store.authProfiles.save([
      state("anthropic", "work", {
        consecutiveFailures: 3,
        cooldownUntil: now - MIN,
        cooldownReason: "overloaded",
        lastErrorKind: "overloaded",
        lastErrorAt: now - 2 * MIN,
      }),
    ]);
    await store.close();
    const r = await runCli(["auth", "--home", home, "--config", config], { env });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^anthropic\s+work\s+failing\s+3\s+never\s+overloaded \(2 min ago\)\s/m);
    expect(r.out).not.toContain("warning");
  });

  it("exits 1 with a plain message when there is no database", async () => {
    const { home, config, env } = setup();
    const r = await runCli(["auth", "status", "--home", home, "--config", config], { env });
    expect(r.code).toBe(1);
    expect(r.out).toBe("");
    expect(r.err).toBe(
      `switchyard auth: no database at ${join(home, "switchyard.db")}, so no profile state yet (the gateway creates it on its first start)\n`,
    );
  });

  it("refuses an unknown action or an extra argument", async () => {
    const { home, config, env } = setup();
    const bad = await runCli(["auth", "frobnicate", "--home", home, "--config", config], { env });
    expect(bad.code).toBe(2);
    expect(bad.err).toBe(
      'switchyard auth: unknown action "frobnicate" (status, reset <provider> <profile>)\n',
    );
    const extra = await runCli(["auth", "status", "now", "--home", home, "--config", config], { env });
    expect(extra.code).toBe(2);
    expect(extra.err).toBe('switchyard auth status: unexpected argument "now"\n');
  });
});

describe("switchyard auth reset", () => {
  it("clears a cooldown and its failures while the gateway's connection is open, and says what it cleared", async () => {
    const { home, config, env } = setup();
    await seed(home, Date.now());
    const gateway = openHomeStore(home);
    try {
      const r = await runCli(["auth", "reset", "anthropic", "work", "--home", home, "--config", config], {
        env,
      });
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      expect(r.out).toMatch(
        /^anthropic:work: cooldown \(rate_limit, (4|5) min left\) and 2 consecutive failures cleared; a running gateway picks this up within 5 s\n$/,
      );
      const work = (await gateway.authProfiles.list()).find((s) => s.profileId === "work");
      expect(work).toMatchObject({
        consecutiveFailures: 0,
        cooldownUntil: null,
        lastErrorKind: "rate_limit",
      });
      expect(work?.resetAt).toBeGreaterThan(0);

      const again = await runCli(["auth", "reset", "anthropic", "work", "--home", home, "--config", config], {
        env,
      });
      expect(again.out).toBe("anthropic:work: nothing to clear (no cooldown or failures recorded)\n");
      const status = await runCli(["auth", "--home", home, "--config", config], { env });
      expect(status.out).toMatch(/^anthropic\s+work\s+ok\s+0\s/m);
      expectNoKey(r, again, status);
    } finally {
      await gateway.close();
    }
  });

  it("refuses a provider or profile the configuration does not name, with exit 2, changing nothing", async () => {
    const { home, config, env } = setup();
    await seed(home, Date.now());
    const store = openHomeStore(home);
    const before = await store.authProfiles.list();
    await store.close();
    const profile = await runCli(["auth", "reset", "anthropic", "nope", "--home", home, "--config", config], {
      env,
    });
    expect(profile.code).toBe(2);
    expect(profile.err).toBe(
      'switchyard auth reset: anthropic has no profile "nope" (its profiles: work, personal)\n',
    );
    // anthropic:old has a stored state but is not configured any more.
    const old = await runCli(["auth", "reset", "anthropic", "old", "--home", home, "--config", config], {
      env,
    });
    expect(old.code).toBe(2);
    const provider = await runCli(["auth", "reset", "mistral", "x", "--home", home, "--config", config], {
      env,
    });
    expect(provider.code).toBe(2);
    expect(provider.err).toBe(
      'switchyard auth reset: no provider "mistral" is configured (profiles: anthropic:work, anthropic:personal, openai:default, ollama:default)\n',
    );
    const missing = await runCli(["auth", "reset", "anthropic", "--home", home, "--config", config], { env });
    expect(missing.code).toBe(2);
    expect(missing.err).toBe(
      "usage: switchyard auth reset <provider> <profile> (see switchyard auth status)\n",
    );
    const after = openHomeStore(home);
    try {
      expect(await after.authProfiles.list()).toEqual(before);
    } finally {
      await after.close();
    }
    expectNoKey(profile, old, provider, missing);
  });

  it("resets a profile whose key comes from an environment variable this shell lacks, if the gateway stored it", async () => {
    const { home, config, env } = setup();
    await seed(home, Date.now());
    const { OPENAI_API_KEY: _, ...without } = env;
    const r = await runCli(["auth", "reset", "openai", "default", "--home", home, "--config", config], {
      env: without,
    });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /^openai:default: cooldown \(auth, (2 h 59 min|3 h) left\) and 1 consecutive failure cleared;/,
    );
    const never = await runCli(["auth", "reset", "openai", "other", "--home", home, "--config", config], {
      env: without,
    });
    expect(never.code).toBe(2);
    expect(never.err).toContain("openai has no key configured here");
  });
});
