/**
 * The line rules of scan.ts: what reads like a prompt injection or an exfiltration recipe in a
 * workspace context file. Every match of a rule starts at one of its anchor words or characters
 * (or at the start of a line holding one); one hand-written pass over the text finds those
 * offsets and tries only the rules anchored there. Running each rule's regex over the whole file
 * costs ten times more.
 */
import type { ScanReason } from "./types.js";

/** One line rule. */
interface ScanRule {
  reason: ScanReason;
  /** Lowercase ASCII words (letters only) a match may start with. */
  words: readonly string[];
  /** Punctuation characters a match may start with. */
  chars?: string;
  /** The match starts at the start of the line holding the anchor word. */
  lineStart?: boolean;
  /**
   * Sticky (`y`), tried at an anchor. Multiline (`m`) when it anchors on `^`. Word gaps (`\s`)
   * may cross lines; everything else stays within one line, a few hundred characters at most.
   */
  pattern: RegExp;
}

// Wording an author uses to forbid the very thing a rule looks for ("never ignore previous
// instructions", "do not send secrets to https://…"): such a line is guidance, not an attack.
// It follows the verb, so it is checked only where a verb matched.
const NOT = String.raw`(?<!\b(?:never|not|don't|dont|won't|cannot|can't|mustn't|shouldn't)\s+[\w-]+)`;
const OVERRIDE_VERBS = ["ignore", "disregard", "forget", "override", "bypass"];
const OVERRIDE_VERB = String.raw`\b(?:ignore|disregard|forget|override|bypass)\b${NOT}`;
const SEND_VERBS = [
  ...["send", "post", "upload", "exfiltrate", "transmit", "forward", "leak", "email", "e"],
  ...["submit", "share", "dump", "pipe"],
];
const SEND_VERB = String.raw`\b(?:send|post|upload|exfiltrate|transmit|forward|leak|e-?mail|submit|share|dump|pipe)\b${NOT}`;
const SECRET =
  String.raw`(?:\bsecrets?\b|\bcredentials?\b|\bcreds\b|\bpasswords?\b|\bpasswd\b|\bpassphrases?\b` +
  String.raw`|\b(?:api|access|auth|bearer|bot|refresh|session|secret|oauth|github|slack|telegram|discord|openai|anthropic)[\s_-]?(?:tokens?|keys?)\b` +
  String.raw`|\b(?:private|ssh|signing|secret)[\s_-]keys?\b|\benv(?:ironment)?\s+var(?:iable)?s?\b` +
  String.raw`|(?<![\w.-])\.(?:env|ssh|aws|netrc|npmrc|pypirc|git-credentials)\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\bcookies?\b)`;
const DESTINATION =
  String.raw`(?:https?:\/\/|\bwebhook\b|[\w.+-]+@[\w-]+\.[a-z]{2,}\b` +
  String.raw`|\b(?:to|at)\s+(?:this|that|the\s+following|my|our)\s+(?:url|endpoint|server|address|link|webhook)\b)`;
// Local files and subshells whose content is a secret.
const SECRET_SOURCE =
  String.raw`(?:\.ssh\/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws\/credentials|\.netrc\b|\.git-credentials\b` +
  String.raw`|\/etc\/(?:passwd|shadow)\b|(?<![\w.-])\.env\b|\$\(\s*(?:env|printenv|set)\s*\)|\`\s*(?:env|printenv)\s*\`)`;
const NET_TOOLS = ["curl", "wget", "nc", "ncat", "netcat", "scp", "rsync", "iwr", "irm", "invoke"];
const NET_TOOL = String.raw`\b(?:curl|wget|nc|ncat|netcat|scp|rsync|iwr|irm|invoke-webrequest|invoke-restmethod)\b`;
// A query-string placeholder for the model to fill: {…}, ${VAR}, <field>, [field].
const PLACEHOLDER = String.raw`(?:\{|\}|%7[bd]|\$\{?\w|<[a-z_]|\[[a-z_ ]+\])`;

/** Checked in this order; a line blocked by one rule is reported once, with that rule's reason. */
const RULES: readonly ScanRule[] = [
  {
    reason: "prompt injection (instruction override)",
    words: OVERRIDE_VERBS,
    pattern: sticky(
      OVERRIDE_VERB +
        String.raw`\s+(?:(?:all|any|each|every|of|the|your|my|these|those|such)\s+)*` +
        String.raw`(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|system|developer|existing)\s+` +
        String.raw`(?:instructions?|prompts?|rules|directions|directives|guidelines|guidance|context|messages?|commands|orders|programming|constraints)\b` +
        `|${OVERRIDE_VERB}` +
        String.raw`\s+(?:all\s+)?(?:of\s+)?(?:your|the\s+system(?:'s)?)\s+` +
        String.raw`(?:rules|instructions|system\s+prompt|prompt|guidelines|programming|restrictions|guardrails|safety\s+(?:rules|guidelines)|policies|constraints)\b` +
        `|${OVERRIDE_VERB}` +
        String.raw`\s+(?:all|everything)\s+(?:that\s+)?(?:above|before\s+this|previously|you\s+(?:were|have\s+been)\s+told)\b`,
    ),
  },
  {
    reason: "prompt injection (role reassignment)",
    words: ["you", "pretend", "act", "dan", "god", "jailbreak", "unrestricted", "unfiltered"],
    pattern: sticky(
      String.raw`\byou\s+are\s+now\s+(?:an?\s|my\s|the\s|in\s+\w+\s+mode\b|no\s+longer\b|free\b|unrestricted\b|unfiltered\b|uncensored\b|jailbroken\b|dan\b|evil\b|called\b|named\b|known\s+as\b)` +
        String.raw`|\byou\s+are\s+no\s+longer\s+(?:an?\s+)?(?:ai|assistant|bound|restricted|limited|claude|chatgpt|gpt)\b` +
        String.raw`|\bpretend\s+(?:that\s+)?you\s+(?:are|have)\s+(?:no|not|an?\s+(?:unrestricted|unfiltered|jailbroken))\b` +
        String.raw`|\bact\s+as\s+(?:if\s+you\s+(?:have|had)\s+no\s+(?:rules|restrictions|guidelines|limits)|an?\s+(?:unrestricted|unfiltered|jailbroken)\b|dan\b)` +
        String.raw`|\b(?:dan|god|jailbreak|unrestricted|unfiltered)\s+mode\b`,
    ),
  },
  {
    reason: "prompt injection (fake instructions header)",
    words: [
      ...["system", "new", "updated", "revised", "real", "actual", "true", "hidden", "secret"],
      ...["override", "admin", "administrator"],
    ],
    pattern: sticky(
      String.raw`\b(?:system\s+(?:prompt|message|instructions?|override|update)` +
        String.raw`|(?:new|updated|revised|real|actual|true|hidden|secret|override)\s+(?:system\s+)?instructions?` +
        String.raw`|admin(?:istrator)?\s+(?:override|instructions?|command))\s*:`,
    ),
  },
  {
    reason: "prompt injection (chat template token)",
    words: [],
    chars: "<[",
    pattern: sticky(
      String.raw`<\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|endofprompt|begin_of_text|end_of_text|start_header_id|end_header_id|eot_id|eom_id)\|>` +
        String.raw`|\[\/?INST\]|<<\/?SYS>>|<\/?(?:system|system[-_]prompt|sys)>|<(?:start|end)_of_turn>`,
    ),
  },
  // Lowercase `### system` as chat templates write it; any case when a colon or "prompt"
  // follows; `SYSTEM:` in capitals. A plain `## System` heading is ordinary markdown.
  {
    reason: "prompt injection (fake role header)",
    words: ["system", "developer", "assistant"],
    lineStart: true,
    pattern: sticky(
      String.raw`^[ \t]*#{1,6}[ \t]*(?:system|developer)[ \t]*\r?$` +
        String.raw`|^[ \t]*#{1,6}[ \t]*(?:[Ss]ystem|SYSTEM|[Dd]eveloper|DEVELOPER|[Aa]ssistant|ASSISTANT)[ \t]*:` +
        String.raw`|^[ \t]*#{1,6}[ \t]*(?:[Ss]ystem|SYSTEM|[Dd]eveloper|DEVELOPER)[ \t]+(?:[Pp]rompt|PROMPT|[Mm]essage|MESSAGE|[Ii]nstructions?|INSTRUCTIONS?|[Oo]verride|OVERRIDE)\b` +
        String.raw`|^[ \t>*_-]*\[?(?:SYSTEM|DEVELOPER)\]?[ \t]*:`,
      "m",
    ),
  },
  {
    reason: "exfiltration (secrets sent to a URL)",
    words: SEND_VERBS,
    pattern: sticky(
      `${SEND_VERB}[^\\n]{0,120}?${SECRET}[^\\n]{0,200}?${DESTINATION}` +
        `|${SEND_VERB}[^\\n]{0,40}?${DESTINATION}[^\\n]{0,200}?${SECRET}`,
      "im",
    ),
  },
  {
    reason: "exfiltration (remote script execution)",
    words: ["curl", "wget", "iwr", "irm", "invoke", "sh", "bash", "zsh", "eval"],
    pattern: sticky(
      String.raw`\b(?:curl|wget)\b[^\n|]{0,300}\|\s*(?:sudo\s+)?(?:(?:ba|z|da|k|fi)?sh|python[0-9.]*|node|perl|ruby|php)\b` +
        String.raw`|\b(?:iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n|]{0,300}\|\s*(?:iex|invoke-expression)\b` +
        String.raw`|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b|\beval\s+"?\$\(\s*(?:curl|wget)\b`,
    ),
  },
  {
    reason: "exfiltration (shell upload of secrets)",
    words: [...NET_TOOLS, "id"],
    chars: "./$`",
    pattern: sticky(
      `${NET_TOOL}[^\\n]{0,300}?${SECRET_SOURCE}` +
        `|${SECRET_SOURCE}[^\\n]{0,300}?\\|\\s*(?:curl|wget|nc|ncat|netcat)\\b` +
        String.raw`|\b(?:curl|wget)\b[^\n]{0,300}?(?:-d|--data[\w-]*|-F|--form|-T|--upload-file|--post-data|--post-file|--body-data)[\s=]+[^\n]{0,300}?\$\{?[A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)\b`,
      "im",
    ),
  },
  {
    reason: "exfiltration (image URL carrying data)",
    words: [],
    chars: "!<",
    pattern: sticky(
      String.raw`!\[[^\]\n]{0,300}\]\(\s*<?https?:\/\/[^\s)]{0,2000}\?[^\s)]{0,2000}?${PLACEHOLDER}` +
        String.raw`|<img\b[^>\n]{0,300}\bsrc\s*=\s*["']?https?:\/\/[^"'\s>]{0,2000}\?[^"'\s>]{0,2000}?${PLACEHOLDER}`,
    ),
  },
];

function sticky(source: string, flags = "i"): RegExp {
  return new RegExp(source, `${flags}y`);
}

/** The hash `findRuleMatches` computes over a word's letters, case folded. */
function wordHash(word: string): number {
  let h = 0;
  for (let i = 0; i < word.length; i++) h = (Math.imul(h, 31) + (word.charCodeAt(i) | 0x20)) | 0;
  return h;
}

// Rules by anchor. A hash collision only costs a failed sticky match: the pattern decides.
const BY_WORD = new Map<number, ScanRule[]>();
const BY_CHAR: Array<ScanRule[] | undefined> = new Array(128);
for (const rule of RULES) {
  for (const word of rule.words) {
    const h = wordHash(word);
    BY_WORD.set(h, [...(BY_WORD.get(h) ?? []), rule]);
  }
  for (const ch of rule.chars ?? "") {
    const code = ch.charCodeAt(0);
    BY_CHAR[code] = [...(BY_CHAR[code] ?? []), rule];
  }
}

/**
 * Calls `onMatch(start, end, reason)` for every rule match in `text`, in text order, rules in
 * table order at the same offset. One pass over the characters: at each word start (ASCII
 * letters after a non-word character) and each anchor character, the rules anchored there are
 * tried in place.
 */
export function findRuleMatches(
  text: string,
  onMatch: (start: number, end: number, reason: ScanReason) => void,
): void {
  const attempt = (rules: readonly ScanRule[], at: number): void => {
    for (const rule of rules) {
      const start = rule.lineStart ? text.lastIndexOf("\n", at - 1) + 1 : at;
      rule.pattern.lastIndex = start;
      const m = rule.pattern.exec(text);
      if (m !== null && m[0] !== "") onMatch(start, start + m[0].length, rule.reason);
    }
  };
  // Whether the previous character is a word character ([A-Za-z0-9_]): no \b before this one.
  let inWord = false;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    const folded = c | 0x20;
    if (folded >= 97 && folded <= 122) {
      let end = i;
      let h = 0;
      for (; end < text.length; end++) {
        const d = text.charCodeAt(end) | 0x20;
        if (d < 97 || d > 122) break;
        h = (Math.imul(h, 31) + d) | 0;
      }
      if (!inWord) {
        const rules = BY_WORD.get(h);
        if (rules !== undefined) attempt(rules, i);
      }
      inWord = true;
      i = end;
      continue;
    }
    inWord = (c >= 48 && c <= 57) || c === 95;
    if (c < 128) {
      const rules = BY_CHAR[c];
      if (rules !== undefined) attempt(rules, i);
    }
    i++;
  }
}
