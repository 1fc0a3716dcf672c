/**
 * A small, honest POSIX-shell reader for the command guard (command-guard.ts). It splits shell
 * text into simple commands (on `;`, `&`, `&&`, `||`, `|`, `|&`, newlines, parentheses) with
 * their words quote-removed, their redirects and here-documents, and the inner text of every
 * `$(…)`, `` `…` ``, `<(…)` and `>(…)` for the caller to read in turn. It does not expand
 * anything: `$HOME`, `~`, `*` and substitutions stay in the words as written. One linear pass.
 */

/** One redirect of a simple command: `2> file` is `{ op: ">", target: "file" }`. */
export interface Redirect {
  /** The operator without its fd number: `>`, `>>`, `>|`, `<`, `<>`, `&>`, `&>>`, `>&`, `<&`, `<<`, `<<-`, `<<<`. */
  op: string;
  /** The word after the operator, quote-removed (for `<<` the here-document's delimiter). */
  target: string;
}

/** How a simple command is joined to the one before it (`start` for the first). */
export type Connector = "start" | ";" | "&" | "&&" | "||" | "|";

/** One simple command as written: nothing expanded, quotes removed. */
export interface SimpleCommand {
  /** Its words, quote-removed; `$VAR`, `~`, globs and `$(…)` kept as written. */
  words: string[];
  redirects: Redirect[];
  /** Inner text of the `$(…)`, `` `…` ``, `<(…)`, `>(…)` in its words and redirect targets. */
  substitutions: string[];
  /** Bodies of its here-documents and here-strings: what it reads on stdin. */
  stdin: string[];
  /** Commands joined by `|` share a pipeline number; every other connector starts a new one. */
  pipeline: number;
  connector: Connector;
}

const SEPARATORS = ["&&", "||", "|&", ";;", ";", "&", "|", "(", ")"] as const;
const REDIRECTS = ["<<<", "<<-", "&>>", "<<", ">>", ">|", "<>", "&>", ">&", "<&", ">", "<"] as const;

/** Splits shell text into simple commands; see the file header. Never throws. */
export function parseShell(text: string): SimpleCommand[] {
  return new ShellReader(text).read();
}

/** Owns one pass over one script: position, the command being built and pending here-documents. */
class ShellReader {
  readonly #s: string;
  #i = 0;
  readonly #out: SimpleCommand[] = [];
  #cmd: SimpleCommand;
  #pipeline = 0;
  #pendingRedirect: string | null = null;
  readonly #heredocs: { delimiter: string; stripTabs: boolean; cmd: SimpleCommand }[] = [];

  constructor(text: string) {
    this.#s = text;
    this.#cmd = this.#fresh("start");
  }

  read(): SimpleCommand[] {
    const s = this.#s;
    while (this.#i < s.length) {
      const c = s[this.#i]!;
      if (c === " " || c === "\t" || c === "\r") {
        this.#i++;
      } else if (c === "\\" && s[this.#i + 1] === "\n") {
        this.#i += 2;
      } else if (c === "\n") {
        this.#i++;
        this.#readHeredocBodies();
        this.#finish(";");
      } else if (c === "#") {
        while (this.#i < s.length && s[this.#i] !== "\n") this.#i++;
      } else if (!this.#operator()) {
        this.#addWord(this.#word());
      }
    }
    this.#finish(";");
    return this.#out;
  }

  #fresh(connector: Connector): SimpleCommand {
    return { words: [], redirects: [], substitutions: [], stdin: [], pipeline: this.#pipeline, connector };
  }

  #finish(next: Connector): void {
    this.#pendingRedirect = null;
    const c = this.#cmd;
    if (c.words.length > 0 || c.redirects.length > 0) this.#out.push(c);
    if (next !== "|") this.#pipeline++;
    this.#cmd = this.#fresh(next);
  }

  /** Reads a separator or redirect operator at the cursor; false when there is none. */
  #operator(): boolean {
    const s = this.#s;
    for (const op of REDIRECTS) {
      if (s.startsWith(op, this.#i)) {
        // `<(` and `>(` are process substitutions, words of their own.
        if ((op === "<" || op === ">") && s[this.#i + 1] === "(") return false;
        this.#i += op.length;
        this.#pendingRedirect = op;
        return true;
      }
    }
    for (const op of SEPARATORS) {
      if (s.startsWith(op, this.#i)) {
        this.#i += op.length;
        this.#finish(op === "|&" ? "|" : op === "&&" || op === "||" || op === "|" || op === "&" ? op : ";");
        return true;
      }
    }
    return false;
  }

  #addWord(word: string): void {
    const op = this.#pendingRedirect;
    if (op !== null) {
      this.#pendingRedirect = null;
      this.#cmd.redirects.push({ op, target: word });
      if (op === "<<<") this.#cmd.stdin.push(word);
      if (op === "<<" || op === "<<-") {
        this.#heredocs.push({ delimiter: word, stripTabs: op === "<<-", cmd: this.#cmd });
      }
      return;
    }
    // `2>file`: a word of digits right before a redirect operator is its fd number, not a word.
    if (/^\d+$/.test(word) && /^[<>]/.test(this.#s.slice(this.#i, this.#i + 1))) return;
    this.#cmd.words.push(word);
  }

  /** Reads one word, removing quotes and escapes; substitutions are kept as written and recorded. */
  #word(): string {
    const s = this.#s;
    let out = "";
    while (this.#i < s.length) {
      const c = s[this.#i]!;
      if (" \t\r\n;&|()".includes(c)) break;
      if ((c === "<" || c === ">") && s[this.#i + 1] === "(" && out === "") {
        out += c + this.#balanced(this.#i + 1);
        continue;
      }
      if (c === "<" || c === ">") break;
      if (c === "\\") {
        if (s[this.#i + 1] === "\n") this.#i += 2;
        else {
          out += s[this.#i + 1] ?? "";
          this.#i += 2;
        }
      } else if (c === "'") {
        const end = s.indexOf("'", this.#i + 1);
        const stop = end < 0 ? s.length : end;
        out += s.slice(this.#i + 1, stop);
        this.#i = stop + 1;
      } else if (c === '"') {
        out += this.#doubleQuoted();
      } else if (c === "$" && s[this.#i + 1] === "'") {
        out += this.#ansiQuoted();
      } else if (c === "$" && s[this.#i + 1] === "(") {
        out += `$${this.#balanced(this.#i + 1)}`;
      } else if (c === "`") {
        out += this.#backticks();
      } else {
        out += c;
        this.#i++;
      }
    }
    return out;
  }

  #doubleQuoted(): string {
    const s = this.#s;
    let out = "";
    this.#i++;
    while (this.#i < s.length && s[this.#i] !== '"') {
      const c = s[this.#i]!;
      if (c === "\\" && '$`"\\\n'.includes(s[this.#i + 1] ?? "")) {
        if (s[this.#i + 1] !== "\n") out += s[this.#i + 1];
        this.#i += 2;
      } else if (c === "$" && s[this.#i + 1] === "(") {
        out += `$${this.#balanced(this.#i + 1)}`;
      } else if (c === "`") {
        out += this.#backticks();
      } else {
        out += c;
        this.#i++;
      }
    }
    this.#i++;
    return out;
  }

  #ansiQuoted(): string {
    const s = this.#s;
    const escapes: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"' };
    let out = "";
    this.#i += 2;
    while (this.#i < s.length && s[this.#i] !== "'") {
      if (s[this.#i] === "\\" && this.#i + 1 < s.length) {
        const e = s[this.#i + 1]!;
        out += escapes[e] ?? e;
        this.#i += 2;
      } else out += s[this.#i++];
    }
    this.#i++;
    return out;
  }

  /** Reads `(…)` starting at `open`, balancing parentheses outside quotes; records the inside. */
  #balanced(open: number): string {
    const s = this.#s;
    let depth = 0;
    let j = open;
    for (; j < s.length; j++) {
      const c = s[j]!;
      if (c === "\\") j++;
      else if (c === "'") j = closing(s, j, "'");
      else if (c === '"') j = closing(s, j, '"');
      else if (c === "(") depth++;
      else if (c === ")" && --depth === 0) break;
    }
    const inner = s.slice(open + 1, j);
    // `$((…))` is arithmetic, not a command.
    if (!(inner.startsWith("(") && inner.endsWith(")"))) this.#cmd.substitutions.push(inner);
    this.#i = Math.min(j + 1, s.length);
    return s.slice(open, this.#i);
  }

  #backticks(): string {
    const s = this.#s;
    let j = this.#i + 1;
    let inner = "";
    for (; j < s.length && s[j] !== "`"; j++) {
      if (s[j] === "\\" && j + 1 < s.length) j++;
      inner += s[j];
    }
    this.#cmd.substitutions.push(inner);
    const raw = s.slice(this.#i, j + 1);
    this.#i = Math.min(j + 1, s.length);
    return raw;
  }

  /** After a newline: the bodies of the here-documents opened on the line just ended. */
  #readHeredocBodies(): void {
    const s = this.#s;
    for (const doc of this.#heredocs.splice(0)) {
      const lines: string[] = [];
      while (this.#i < s.length) {
        let end = s.indexOf("\n", this.#i);
        if (end < 0) end = s.length;
        const line = s.slice(this.#i, end);
        this.#i = end + 1;
        if ((doc.stripTabs ? line.replace(/^\t+/, "") : line) === doc.delimiter) break;
        lines.push(line);
      }
      doc.cmd.stdin.push(lines.join("\n"));
    }
  }
}

/** Index of the quote closing the one at `open` (honouring backslashes inside double quotes). */
function closing(s: string, open: number, quote: "'" | '"'): number {
  for (let j = open + 1; j < s.length; j++) {
    if (quote === '"' && s[j] === "\\") j++;
    else if (s[j] === quote) return j;
  }
  return s.length;
}
