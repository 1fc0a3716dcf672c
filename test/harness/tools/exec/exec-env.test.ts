import { describe, expect, it } from "vitest";
import { checkPassEnv, execEnv, secretNameReason } from "../../../../src/harness/tools/exec/exec-env.js";
import { ExecError } from "../../../../src/harness/tools/exec/exec-error.js";

describe("execEnv", () => {
  const base = {
    PATH: "/usr/bin:/bin",
    HOME: "/home/agent",
    LANG: "C.UTF-8",
    TZ: "Europe/Paris",
    ANTHROPIC_API_KEY: "sk-ant-x",
    SLACK_BOT_TOKEN: "xoxb-x",
    SWITCHYARD_HOME: "/srv/sy",
    NODE_OPTIONS: "--inspect",
    MAKEFLAGS: "-j2",
  };

  it("keeps only PATH, HOME, LANG, TZ and the passEnv names that are set", () => {
    expect(execEnv(base, ["MAKEFLAGS", "NOT_SET"], "/ws")).toEqual({
      PATH: "/usr/bin:/bin",
      HOME: "/home/agent",
      LANG: "C.UTF-8",
      TZ: "Europe/Paris",
      MAKEFLAGS: "-j2",
    });
  });

  it("uses the workspace as HOME only when the base has none", () => {
    expect(execEnv({ PATH: "/bin" }, [], "/ws")).toEqual({ PATH: "/bin", HOME: "/ws" });
  });
});

describe("passEnv names", () => {
  const refused = [
    "ANTHROPIC_API_KEY",
    "OPENAI_APIKEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "STRIPE_KEY",
    "SSH_PRIVATE_KEY",
    "GITHUB_TOKEN",
    "SLACK_BOT_TOKEN",
    "discord_token",
    "GH_TOKENS",
    "CLIENT_SECRET",
    "DB_PASSWORD",
    "PGPASSWORD",
    "MYSQL_PWD",
    "SMTP_PASS",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "SSH_AUTH_SOCK",
    "SENTRY_DSN",
    "DATABASE_URL",
    "SWITCHYARD_TOKEN",
    "SWITCHYARD_CONFIG",
  ];
  const allowed = [
    "MAKEFLAGS",
    "GOPATH",
    "MONKEY",
    "TOKENIZERS_PARALLELISM",
    "GIT_AUTHOR_NAME",
    "KEYBOARD",
    "NODE_ENV",
    "PWD",
    "BYPASS_CACHE",
  ];

  it.each(refused)("refuses %s as secret-looking", (name) => {
    expect(secretNameReason(name)).toBeDefined();
    const err = catchError(() => checkPassEnv(["MAKEFLAGS", name]));
    expect(err).toBeInstanceOf(ExecError);
    expect(err).toMatchObject({ kind: "env_name_secret", variable: name });
    expect(String((err as Error).message)).toContain(name);
  });

  it.each(allowed)("lets %s through", (name) => {
    expect(secretNameReason(name)).toBeUndefined();
    expect(() => checkPassEnv([name])).not.toThrow();
  });

  it("refuses what is not a variable name", () => {
    expect(catchError(() => checkPassEnv(["A=B"]))).toMatchObject({
      kind: "env_name_invalid",
      variable: "A=B",
    });
    expect(catchError(() => checkPassEnv(["1X"]))).toMatchObject({ kind: "env_name_invalid" });
  });
});

function catchError(fn: () => void): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected a throw");
}
