import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/util/logger.js";
import { SecretList, redactSecrets } from "../../src/util/redact.js";

// Real key shapes and lengths (random characters, not live credentials).
const KEYS = {
  // sk-ant-api03- + 93 characters + "AA": 108 characters, as Anthropic issues them.
  anthropic: `sk-ant-api03-${"Zq8v2LkPq9xYw3nR7tB1mC4dF6gH8jK0lM2nP4qR6sT8uV0wX2yZ4aB6cD8eF0gH2iJ4kL6mN8oP0qR2sT4u-ABCDEF12_xY"}AA`,
  // Project keys: sk-proj- + ~156 characters with the T3BlbkFJ marker in the middle.
  openai: `sk-proj-${"AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGhIjKlMnOpQrStUvWxYz01234"}T3BlbkFJ${"aBcDeFgHiJkLmNoPqRsTuVwXyZ9876543210-_aBcDeFgHiJkLmNoPqRsTuVwXyZ98765"}`,
  openaiLegacy: "sk-4fXy0123456789abcdefABCDEFghijklmnopQRSTuv",
  slackBot: "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
  slackApp:
    "xapp-1-A0123456789-1234567890123-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
  // <bot id>:AA + 33 characters.
  telegram: "123456789:AAHk3jD9fLq2mN7pR4sT8vW1xY5zA0bC3dE",
  // base64url(user id) . base64url(timestamp) . base64url(hmac)
  discord: "MTA0NTY3ODkwMTIzNDU2Nzg5MA.GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab",
};

/** Where secrets turn up in logs: bare, in URLs, in JSON, in Authorization headers. */
const CONTEXTS: Record<string, (key: string) => string> = {
  bare: (k) => `using ${k} now`,
  "Bot API URL": (k) => `GET http://127.0.0.1:8081/bot${k}/getMe failed`,
  "Bot API file URL": (k) => `download /file/bot${k}/photos/file_7.jpg`,
  "query string": (k) => `http://127.0.0.1:9000/cb?token=${k}&retry=1`,
  "JSON value": (k) => JSON.stringify({ config: { apiKey: k, retries: 3 } }),
  "Authorization header": (k) => `Authorization: Bearer ${k}`,
  "Authorization in JSON": (k) => JSON.stringify({ headers: { Authorization: `Bearer ${k}` } }),
  "Bearer in a URL": (k) => `https://proxy.example.com/fwd?auth=Bearer%20${k}`,
  "Discord Authorization": (k) => `authorization: Bot ${k}`,
};

/** True when any 12-character piece of `key` past its public prefix is still in `text`. */
function leaks(text: string, key: string): boolean {
  const secret = key.replace(/^(?:sk-ant-api03-|sk-proj-|sk-|xox[a-z]-|xapp-)/, "");
  for (let i = 0; i + 12 <= secret.length; i++) if (text.includes(secret.slice(i, i + 12))) return true;
  return false;
}

describe("redactSecrets", () => {
  for (const [name, key] of Object.entries(KEYS)) {
    for (const [where, wrap] of Object.entries(CONTEXTS)) {
      it(`redacts a ${name} key (${where})`, () => {
        const out = redactSecrets(wrap(key));
        expect(leaks(out, key), out).toBe(false);
        expect(out).toContain("[REDACTED]");
      });
    }
  }

  it("keeps the text around a redacted key readable", () => {
    expect(redactSecrets(`using ${KEYS.anthropic} now`)).toBe("using sk-ant-…[REDACTED] now");
    expect(redactSecrets(`GET http://127.0.0.1:8081/bot${KEYS.telegram}/getMe`)).toBe(
      "GET http://127.0.0.1:8081/bot[REDACTED]/getMe",
    );
    expect(redactSecrets(`/file/bot${KEYS.telegram}/photos/x.jpg`)).toBe("/file/bot[REDACTED]/photos/x.jpg");
  });

  it("redacts Authorization header values of any scheme", () => {
    for (const line of [
      '{"authorization":"Bearer abc.def.ghi-very-secret"}',
      "Authorization: Bot some-discord-token-value",
      'x-api-key: "sk-ant-secret-value-123456"',
    ]) {
      const out = redactSecrets(line);
      expect(out).toContain("[REDACTED]");
      expect(out).not.toMatch(/secret|some-discord-token/);
    }
  });

  it("leaves ordinary text alone", () => {
    const text = "The meeting is at 10:30, task-1234 done; see https://example.com/a?b=c";
    expect(redactSecrets(text)).toBe(text);
  });

  it("SecretList redacts configured values of any shape", () => {
    const list = new SecretList();
    list.add("hunter2-but-longer");
    expect(list.redact("pw=hunter2-but-longer")).toBe("pw=[REDACTED]");
  });
});

/** A JSON logger whose lines are kept. */
function jsonLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { lines, logger: createLogger({ destination: sink, format: "json" }) };
}

describe("logger", () => {
  it("redacts secrets in every serialized line, whatever the field", async () => {
    const { lines, logger } = jsonLogger();
    const child = logger.child({ name: "provider.anthropic" });
    child.info({ apiKey: KEYS.anthropic }, "configured");
    child.warn({ err: new Error(`401 for key ${KEYS.openai}`) }, "call failed");
    child.info({ headers: { authorization: `Bearer ${KEYS.openai}` } }, "request");
    child.info(`bot token ${KEYS.telegram} and ${KEYS.slackBot} and ${KEYS.discord}`);
    logger.flush();
    await new Promise((r) => setImmediate(r));
    const all = lines.join("");
    expect(lines.length).toBe(4);
    for (const key of Object.values(KEYS)) expect(all).not.toContain(key);
    expect(all).toContain('"name":"provider.anthropic"');
  });

  it("redacts apiKey, token and authorization values of any shape, at any depth", async () => {
    const { lines, logger } = jsonLogger();
    logger.info({ token: "plain-word", provider: { config: { apiKey: 'odd"quoted\\value' } } }, "x");
    logger.info({ headers: { Authorization: "Basic dXNlcjpwYXNz" }, tokens: 12, inputTokens: 3 }, "y");
    logger.flush();
    await new Promise((r) => setImmediate(r));
    const [first, second] = lines.map((l) => JSON.parse(l));
    expect(first.token).toBe("[REDACTED]");
    expect(first.provider.config.apiKey).toBe("[REDACTED]");
    expect(second.headers.Authorization).toBe("[REDACTED]");
    expect([second.tokens, second.inputTokens]).toEqual([12, 3]);
  });
});
