/**
 * A configuration problem, wherever it is found (the config loader, a channel planning its bot
 * accounts): one line per issue naming the key path, what was found and what was expected.
 * The CLI prints `describe()` and exits 2.
 */

/** A configuration problem. `issues` are one line each, ready to print. */
export class ConfigError extends Error {
  readonly code = "bad_config";
  readonly issues: string[];
  readonly file: string | undefined;
  constructor(file: string | undefined, issues: string[]) {
    super(
      `${file ? `config ${file}` : "config"}: ${issues.length === 1 ? issues[0] : `${issues.length} problems`}`,
    );
    this.name = "ConfigError";
    this.issues = issues;
    this.file = file;
  }
  /** Multi-line text for a terminal. */
  describe(): string {
    const where = this.file ? `in ${this.file}` : "in the configuration";
    return [`switchyard: bad configuration ${where}:`, ...this.issues.map((i) => `  - ${i}`)].join("\n");
  }
}
