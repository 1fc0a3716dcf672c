import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/util/logger.js";
import { SecretList, redactSecrets } from "../../src/util/redact.js";

// Real key shapes (random, not live credentials).
const KEYS = {
  anthropic:
    "sk-ant-api03-Zq8v2LkPq9xYw3nR7tB1mC4dF6gH8jK0lM2nP4qR6sT8uV0wX2yZ4aB6cD8eF0gH2iJ4kL6mN8oP0qR2sT4u-ABCDEF12",
  openai: "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUvWx",
  openaiLegacy: "sk-4fXy0123456789abcdefABCDEFghijklmnopQRSTuv",
  slackBot: "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
  slackApp: "xapp-1-A0123456789-1234567890123-0123456789abcdef0123456789abcdef",
  telegram: "123456789:AAHk3jD9fLq2mN7pR4sT8vW1xY5zA0bC3dE",
  discord: "MTA0NTY3ODkwMTIzNDU2Nzg5MA.GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789ab",
};

describe("redactSecrets", () => {
  for (const [name, key] of Object.entries(KEYS)) {
    it(`redacts a ${name} key`, () => {
      const out = redactSecrets(`using ${key} now`);
      expect(out).not.toContain(key);
      expect(out).toContain("[REDACTED]");
      expect(out.startsWith("using ")).toBe(true);
    });
  }

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

describe("logger", () => {
  it("redacts secrets in every serialized line, whatever the field", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    const logger = createLogger({ destination: sink, format: "json" });
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
});
