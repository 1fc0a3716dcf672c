/**
 * Secret redaction applied to every serialized log line (and to tool output). Patterns are
 * the real shapes of vendor keys and bot tokens; a match keeps a short prefix so an operator
 * can still tell which key it was.
 */

interface RedactionRule {
  name: string;
  pattern: RegExp;
  /** Characters of the match kept visible. */
  keep: number;
}

const RULES: RedactionRule[] = [
  // Anthropic before OpenAI: sk-ant-api03-… also starts with sk-.
  { name: "anthropic", pattern: /sk-ant-[A-Za-z0-9_-]{8,}/g, keep: 7 },
  { name: "openai", pattern: /sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}/g, keep: 3 },
  { name: "slack", pattern: /xox[abposr]-[A-Za-z0-9-]{10,}/g, keep: 5 },
  { name: "slack-app", pattern: /xapp-[A-Za-z0-9-]{10,}/g, keep: 5 },
  // Telegram bot token: <bot id>:<35 chars>, bare or in a Bot API URL (`/bot<token>/getMe`,
  // `/file/bot<token>/…`), where no word boundary separates "bot" from the id: hence a look-behind.
  { name: "telegram", pattern: /(?<![0-9])\d{6,12}:[A-Za-z0-9_-]{30,}/g, keep: 0 },
  // Discord bot token: base64 id . timestamp . hmac; also right after "bot"/"Bot".
  {
    name: "discord",
    pattern:
      /(?:(?<=[Bb]ot)|(?<![A-Za-z0-9_-]))[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}/g,
    keep: 0,
  },
  { name: "github", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g, keep: 4 },
  { name: "google", pattern: /\bAIza[A-Za-z0-9_-]{30,}/g, keep: 4 },
  // Authorization header values, whatever the scheme.
  {
    name: "authorization",
    pattern: /((?:authorization|x-api-key)["']?\s*[:=]\s*["']?)(?:Bearer |Bot |Basic )?[^\s"',}]{6,}/gi,
    keep: -1,
  },
  // Bearer credentials, also URL-encoded (`Bearer%20…`) inside a query string.
  { name: "bearer", pattern: /\bBearer(?:\s+|%20|\+)[A-Za-z0-9._~+/=-]{8,}/g, keep: 6 },
  {
    name: "pem",
    pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
    keep: 0,
  },
];

const MARK = "[REDACTED]";

/** Returns `text` with every known secret shape replaced. Cheap when nothing matches. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const rule of RULES) {
    rule.pattern.lastIndex = 0;
    if (!rule.pattern.test(out)) continue;
    rule.pattern.lastIndex = 0;
    out = out.replace(rule.pattern, (match: string, group1?: unknown) => {
      if (rule.keep === -1 && typeof group1 === "string") return `${group1}${MARK}`;
      return rule.keep > 0 ? `${match.slice(0, rule.keep)}…${MARK}` : MARK;
    });
  }
  return out;
}

/** Exact secret values known at start-up (configured keys), redacted wherever they appear. */
export class SecretList {
  #values: string[] = [];
  add(value: string | undefined): void {
    if (value && value.length >= 8 && !this.#values.includes(value)) this.#values.push(value);
  }
  redact(text: string): string {
    let out = redactSecrets(text);
    for (const v of this.#values) if (out.includes(v)) out = out.split(v).join(MARK);
    return out;
  }
}
