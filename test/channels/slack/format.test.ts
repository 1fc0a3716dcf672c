import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { markdownToMrkdwn, mrkdwnToText, renderSlackChunks } from "../../../src/channels/slack/format.js";

const ZWSP = "\u200B";

/** Sequences the renderer may emit raw: mentions it passed through and links it built. */
const ALLOWED =
  /<(?:@[UWB][A-Z0-9]{2,}|#[CG][A-Z0-9]{2,})(?:\|[^<>&|\n]*)?>|<(?:https?:\/\/|mailto:)(?:[^\s<>|&]|&amp;)*(?:\|(?:[^<>&\n]|&(?:amp|lt|gt);)*)?>/gi;

/** No raw `<`/`&` outside entities and allowed sequences; a raw `>` only as a quote marker. */
function expectSafe(mrkdwn: string): void {
  const rest = mrkdwn.replace(ALLOWED, "").replace(/&(?:amp|lt|gt);/g, "");
  expect(rest, mrkdwn).not.toMatch(/[<&]/);
  for (const line of rest.split("\n")) expect(line.slice(1), mrkdwn).not.toContain(">");
}

const fenceLines = (s: string) => s.split("\n").filter((l) => l === "```").length;

/** Every chunk fits, is safe, and opens as many code blocks as it closes. */
function expectChunksValid(chunks: string[], max: number): void {
  for (const chunk of chunks) {
    expect(chunk.length).toBeLessThanOrEqual(max);
    expect(chunk.length).toBeGreaterThan(0);
    expect(fenceLines(chunk) % 2, chunk).toBe(0);
    expect(chunk, "no trailing whitespace").toBe(chunk.trimEnd());
    expectSafe(chunk);
  }
}

/** `expected` words appear in `text`'s words in order (others may come between). */
function expectWordsInOrder(text: string, expected: string[]): void {
  const words = text.split(/[^A-Za-z0-9]+/).filter(Boolean);
  let k = 0;
  for (const w of words) if (w === expected[k]) k++;
  expect(k, `missing from the output: ${expected[k]}`).toBe(expected.length);
}

describe("markdownToMrkdwn", () => {
  describe("emphasis", () => {
    it.each([
      ["**bold**", "*bold*"],
      ["__bold__ text", "*bold* text"],
      ["*italic*", "_italic_"],
      ["_italic_", "_italic_"],
      ["~~gone~~ and ~gone~", "~gone~ and ~gone~"],
      ["***both***", "*_both_*"],
      ["**bold with _italic_ inside**", "*bold with _italic_ inside*"],
      ["**bold *italic***", "*bold _italic_*"],
      ["*it **b** c*", "_it *b* c_"],
      ["(**a**), **b**.", "(*a*), *b*."],
      ["**bold **nested** twice**", "*bold nested twice*"],
      ["*a *b c*", "*a _b c_"],
      ["__dunder__ is bold, as in CommonMark", "*dunder* is bold, as in CommonMark"],
    ])("%j → %j", (md, out) => {
      expect(markdownToMrkdwn(md)).toBe(out);
    });

    it.each([
      "snake_case_word",
      "2*3*4",
      "a * b * c",
      "a ** b ** c",
      "file_name.py and my_var_name",
      "__init__.py and _config_.yml",
      "foo**bar**baz",
      "x_1 + y_2 = z_3",
      "5 * 2 and 3 *x and y *z",
      "* not a list, just a star",
      "**unclosed bold",
      "_unclosed italic and ~~unclosed strike",
      "****four****",
    ])("keeps %j literal", (md) => {
      const out = markdownToMrkdwn(md);
      expect(out).toBe(md.startsWith("* ") ? `• ${md.slice(2)}` : md);
    });

    it("never lets a mark bleed: each emitted pair closes on its line", () => {
      const out = markdownToMrkdwn("**open\nstill** and *x\ny*");
      expect(out).toBe("**open\nstill** and *x\ny*");
    });
  });

  describe("escaping and Slack control sequences", () => {
    it.each([
      ["a < b & c > d", "a &lt; b &amp; c &gt; d"],
      ["&amp; stays visible", "&amp;amp; stays visible"],
      ["<b>bold?</b> <script>", "&lt;b&gt;bold?&lt;/b&gt; &lt;script&gt;"],
      ["line<br>next<br/>last", "line\nnext\nlast"],
      ["hi <@U123ABC> and <@W123>", "hi <@U123ABC> and <@W123>"],
      ["see <#C123ABC> or <#C123|general>", "see <#C123ABC> or <#C123|general>"],
      ["<!here> <!channel> <!everyone>", "&lt;!here&gt; &lt;!channel&gt; &lt;!everyone&gt;"],
      [
        "<!subteam^S123> <!date^1392734382^{date}|x>",
        "&lt;!subteam^S123&gt; &lt;!date^1392734382^{date}|x&gt;",
      ],
      ["<@not-an-id> <#lower>", "&lt;@not-an-id&gt; &lt;#lower&gt;"],
      ["\\*not italic\\* and \\_x\\_ and \\<tag\\>", "*not italic* and _x_ and &lt;tag&gt;"],
      ["a \\ b", "a \\ b"],
    ])("%j → %j", (md, out) => {
      expect(markdownToMrkdwn(md)).toBe(out);
    });
  });

  describe("quotes", () => {
    it.each([
      ["> quoted **b**\n> more", "> quoted *b*\n> more"],
      ["> a < b > c", "> a &lt; b &gt; c"],
      [">> nested\n> > too", "> nested\n> too"],
      ["> - item\n> # Head", "> • item\n> *Head*"],
      ["> one\n>\n> two", "> one\n>\n> two"],
      ["> a<br>b", "> a\n> b"],
      ["not > a quote", "not &gt; a quote"],
    ])("%j → %j", (md, out) => {
      expect(markdownToMrkdwn(md)).toBe(out);
    });
  });

  describe("lists", () => {
    it.each([
      ["- one\n* two\n+ three", "• one\n• two\n• three"],
      ["- a\n  - b\n    - c\n      - d\n- e", "• a\n    ◦ b\n        ▪ c\n            • d\n• e"],
      ["1. first\n2. **second**\n10) tenth", "1. first\n2. *second*\n10) tenth"],
      ["1. step\n   - detail\n2. next", "1. step\n    ◦ detail\n2. next"],
      ["- [ ] todo\n- [x] done\n- [X] also", "☐ todo\n☑ done\n☑ also"],
      ["- item\n\n  continued\ntext", "• item\n\n  continued\ntext"],
      ["-not a list", "-not a list"],
    ])("%j → %j", (md, out) => {
      expect(markdownToMrkdwn(md)).toBe(out);
    });
  });

  describe("code", () => {
    it.each([
      ["use `a < b && c` here", "use `a &lt; b &amp;&amp; c` here"],
      ["`**not bold**` and `_x_`", "`**not bold**` and `_x_`"],
      ["``has ` tick``", "has ` tick"],
      ["`` `x` ``", "`x`"],
      ["a ` lone tick", "a ` lone tick"],
      ["inline ``` run", `inline \`${ZWSP}\`${ZWSP}\` run`],
      ["`<@U123>`", "`&lt;@U123&gt;`"],
    ])("%j → %j", (md, out) => {
      expect(markdownToMrkdwn(md)).toBe(out);
    });

    it("renders fenced blocks without the language, escaped, markup untouched", () => {
      expect(markdownToMrkdwn("```ts\nconst a = x < 1 && **y**; // <@U1>\n```")).toBe(
        "```\nconst a = x &lt; 1 &amp;&amp; **y**; // &lt;@U1&gt;\n```",
      );
      expect(markdownToMrkdwn("Text:\n~~~\n_x_\n~~~\nafter *it*")).toBe("Text:\n```\n_x_\n```\nafter _it_");
      expect(markdownToMrkdwn("````md\n```js\ninner\n```\n````")).toBe(
        `\`\`\`\n\`${ZWSP}\`${ZWSP}\`js\ninner\n\`${ZWSP}\`${ZWSP}\`\n\`\`\``,
      );
      expect(markdownToMrkdwn("1. run:\n   ```sh\n   npm i\n   ```")).toBe("1. run:\n```\nnpm i\n```");
    });

    it("closes an unclosed fence and drops an empty one", () => {
      expect(markdownToMrkdwn("```py\nprint(1 < 2)")).toBe("```\nprint(1 &lt; 2)\n```");
      expect(markdownToMrkdwn("before\n```\n```\nafter")).toBe("before\nafter");
    });

    it("leaves indented code as it is, escaped", () => {
      expect(markdownToMrkdwn("Code:\n\n    if (a < b) **x**")).toBe("Code:\n\n    if (a &lt; b) **x**");
    });
  });

  describe("links", () => {
    it.each([
      ["[the docs](https://example.test/a?b=1&c=2)", "<https://example.test/a?b=1&amp;c=2|the docs>"],
      ["[a|b > c](https://x.test)", "<https://x.test|a∣b &gt; c>"],
      ["[**bold** label](https://x.test)", "<https://x.test|*bold* label>"],
      ["[x](https://x.test/a|b)", "<https://x.test/a%7Cb|x>"],
      ["[wiki](https://wiki.test/wiki/Foo_(bar))", "<https://wiki.test/wiki/Foo_(bar)|wiki>"],
      ['[t](https://x.test "title")', "<https://x.test|t>"],
      ["[](https://x.test)", "<https://x.test>"],
      ["![a chart](https://x.test/c.png)", "<https://x.test/c.png|a chart>"],
      ["[mail me](mailto:me@x.test)", "<mailto:me@x.test|mail me>"],
      ["<https://x.test/a_b_c?d=1&e=2>", "<https://x.test/a_b_c?d=1&amp;e=2>"],
      ["<me@x.test>", "<mailto:me@x.test|me@x.test>"],
      ["see https://x.test/__a__/b*c* now", "see https://x.test/__a__/b*c* now"],
      ["**https://x.test/a_b**", "*https://x.test/a_b*"],
      ["[x](javascript:alert(1))", "[x](javascript:alert(1))"],
      ["[rel](/docs/a)", "[rel](/docs/a)"],
      ["[<https://in.test>](https://x.test)", "<https://x.test|&lt;https://in.test&gt;>"],
    ])("%j → %j", (md, out) => {
      expect(markdownToMrkdwn(md)).toBe(out);
    });
  });

  describe("headings and rules", () => {
    it.each([
      ["# Title", "*Title*"],
      ["### Title ###", "*Title*"],
      ["## **Already bold**", "*Already bold*"],
      ["# Use **this** and _that_", "*Use this and _that_*"],
      ["# C# & <T>", "*C# &amp; &lt;T&gt;*"],
      ["#hashtag", "#hashtag"],
      ["#", "#"],
      ["---", "──────────"],
      ["* * *", "──────────"],
      ["___", "──────────"],
      ["text\n\n***\n\nmore", "text\n\n──────────\n\nmore"],
    ])("%j → %j", (md, out) => {
      expect(markdownToMrkdwn(md)).toBe(out);
    });
  });

  describe("tables", () => {
    it("renders a table as an aligned code block, cells stripped of marks and escaped", () => {
      const md = [
        "Results:",
        "",
        "| Name | Score | Note |",
        "|:-----|------:|:----:|",
        "| **Alice** | 10 | a < b |",
        "| Bob | 7 | [link](https://x.test) |",
        "| `c\\|d` | | x<br>y |",
        "",
        "After.",
      ].join("\n");
      expect(markdownToMrkdwn(md)).toBe(
        [
          "Results:",
          "",
          "```",
          "Name  | Score |         Note",
          "------+-------+----------------------",
          "Alice |    10 |         a &lt; b",
          "Bob   |     7 | link (https://x.test)",
          "c|d   |       |          x y",
          "```",
          "",
          "After.",
        ].join("\n"),
      );
    });

    it("needs a delimiter row with the header's column count", () => {
      expect(markdownToMrkdwn("a | b\n---")).toBe("a | b\n──────────");
      expect(markdownToMrkdwn("a | b\nc | d")).toBe("a | b\nc | d");
      expect(markdownToMrkdwn("a | b\n--|--\n1 | 2 | 3\n4")).toBe("```\na | b\n--+------\n1 | 2 | 3\n```\n4");
    });
  });

  it("normalises CRLF and leaves no trailing whitespace", () => {
    expect(markdownToMrkdwn("\r\n\r\n**a**  \r\nb\t\r\n\r\n\r\n")).toBe("*a*\nb");
    expect(markdownToMrkdwn("   \n")).toBe("");
  });
});

describe("mrkdwnToText", () => {
  it.each([
    ["*bold* _it_ ~s~ *_both_*", "bold it s both"],
    ["a &lt; b &amp;&amp; c &gt; d &amp;lt;", "a < b && c > d &lt;"],
    [
      "<https://x.test|docs> <https://x.test> <https://a.test?b=1&amp;c=2|q>",
      "docs (https://x.test) https://x.test q (https://a.test?b=1&c=2)",
    ],
    ["<mailto:me@x.test|me@x.test> <https://x.test|*b*>", "me@x.test b (https://x.test)"],
    ["hi <@U123> in <#C1|general>", "hi <@U123> in <#C1|general>"],
    ["snake_case 2*3*4 a * b file_name.py", "snake_case 2*3*4 a * b file_name.py"],
    ["`*x* &lt;y&gt;` and *z*", "*x* <y> and z"],
    ["> quoted *b*\n• item", "quoted b\n• item"],
    ["```\n*raw* &amp;\n```", "*raw* &"],
    [`\`${ZWSP}\`${ZWSP}\``, "```"],
  ])("%j → %j", (mrkdwn, text) => {
    expect(mrkdwnToText(mrkdwn)).toBe(text);
  });

  it("recovers the text of rendered Markdown", () => {
    const md = "# Hi\n\n**Use** `a<b` with [docs](https://x.test) & _care_ ~~not~~.";
    expect(mrkdwnToText(markdownToMrkdwn(md))).toBe("Hi\n\nUse a<b with docs (https://x.test) & care not.");
  });
});

describe("renderSlackChunks", () => {
  it("returns nothing for blank input and one chunk for a short reply", () => {
    expect(renderSlackChunks("", 4000)).toEqual([]);
    expect(renderSlackChunks(" \n\t\r\n ", 4000)).toEqual([]);
    expect(renderSlackChunks("**hi** <there>", 4000)).toEqual(["*hi* &lt;there&gt;"]);
    expect(renderSlackChunks("```\n```", 4000)).toEqual([]);
    expect(() => renderSlackChunks("x", 4)).toThrow(RangeError);
  });

  it("splits a 10 000-character code block into balanced code chunks", () => {
    const lines = Array.from({ length: 400 }, (_, i) => `if (a${i} < b && c > d) x &= ${i}; // line ${i}`);
    const md = `Here:\n\n\`\`\`ts\n${lines.join("\n")}\n\`\`\`\n\nDone.`;
    expect(md.length).toBeGreaterThan(10_000);
    const chunks = renderSlackChunks(md, 4000);
    expectChunksValid(chunks, 4000);
    const code = chunks.filter((c) => c.includes("```"));
    expect(code.length).toBeGreaterThanOrEqual(4); // escaping lengthens it past 3 × 4000
    for (const c of code) expect(fenceLines(c)).toBe(2);
    const shown = chunks.map(mrkdwnToText).join("\n").split("\n");
    expect(shown.filter((l) => l.startsWith("if ("))).toEqual(lines);
    expect(shown[0]).toBe("Here:");
    expect(shown.at(-1)).toBe("Done.");
  });

  it("re-cuts text that escaping expands four to five times", () => {
    const words = Array.from({ length: 2500 }, (_, i) =>
      i % 3 === 0 ? "&&&&" : i % 3 === 1 ? "<<&>" : `w${i}&`,
    );
    const md = words.join(" ");
    const chunks = renderSlackChunks(md, 4000);
    expectChunksValid(chunks, 4000);
    expect(chunks.length).toBeGreaterThan(Math.ceil((md.length * 4) / 4000) - 1);
    expect(chunks.map(mrkdwnToText).join(" ").split(/\s+/)).toEqual(words);
  });

  it("keeps a long mixed reply whole, in order, within every limit", () => {
    const section = (i: number) =>
      [
        `## Part ${i}`,
        `Some **bold ${i}** prose with \`code<${i}>\`, a [link ${i}](https://x.test/${i}?a=1&b=2) and _more_ words.`,
        `- item ${i} & friends`,
        `  - nested ${i}`,
        `> quoted ${i} <@U123ABC>`,
        "```js",
        `const v${i} = a < b && c;`,
        "```",
        `| col${i} | val |`,
        "|---|---|",
        `| k${i} | ${i} |`,
      ].join("\n");
    const md = Array.from({ length: 60 }, (_, i) => section(i)).join("\n\n");
    for (const max of [4000, 700, 300]) {
      const chunks = renderSlackChunks(md, max);
      expectChunksValid(chunks, max);
      const visible = chunks.map(mrkdwnToText).join("\n");
      expectWordsInOrder(
        visible,
        md.replace(/\]\([^)]*\)|<@U123ABC>|```js/g, "").match(/[A-Za-z0-9]+/g) ?? [],
      );
    }
  });

  it("hard-cuts a single unbreakable word, never splitting an entity", () => {
    const chunks = renderSlackChunks(`${"&".repeat(50)}x${"<".repeat(30)}`, 12);
    expectChunksValid(chunks, 12);
    expect(chunks.map(mrkdwnToText).join("")).toBe(`${"&".repeat(50)}x${"<".repeat(30)}`);
  });
});

describe("properties", () => {
  const piece = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.string({ unit: "binary", maxLength: 6 }),
    fc.constantFrom(
      "**",
      "*",
      "_",
      "__",
      "~~",
      "~",
      "`",
      "```",
      "```js\n",
      "~~~",
      "[a](https://x.test/a?b&c)",
      "[a|b](https://x.test/)",
      "![i](https://x.test/i.png)",
      "<https://x.test/?a&b>",
      "<me@x.test>",
      "<@U123ABC>",
      "<#C123|gen>",
      "<!channel>",
      "<br>",
      "<b>",
      "&",
      "&amp;",
      "<",
      ">",
      "\\",
      "\n",
      "\r\n",
      "\n\n",
      "> ",
      "# ",
      "- ",
      "1. ",
      "- [ ] ",
      "    ",
      "| a | b |\n|---|---|\n",
      "---\n",
      "https://x.test/a_b*c*",
      " ",
    ),
  );
  const markdown = fc.array(piece, { maxLength: 80, size: "max" }).map((p) => p.join(""));

  it("renders anything without throwing, safely escaped, fences balanced", () => {
    fc.assert(
      fc.property(markdown, (md) => {
        const out = markdownToMrkdwn(md);
        expectSafe(out);
        expect(fenceLines(out) % 2).toBe(0);
        expect(typeof mrkdwnToText(out)).toBe("string");
      }),
      { numRuns: 2000 },
    );
  });

  it("chunks anything within the limit", () => {
    fc.assert(
      fc.property(
        fc.oneof(markdown, fc.string({ unit: "binary", maxLength: 3000, size: "max" })),
        fc.integer({ min: 5, max: 400 }),
        (md, max) => {
          expectChunksValid(renderSlackChunks(md, max), max);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("keeps every word of plain prose, in order", () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z]{1,12}$/), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 20, max: 200 }),
        (words, max) => {
          const chunks = renderSlackChunks(words.join(" "), max);
          expectChunksValid(chunks, max);
          expect(chunks.map(mrkdwnToText).join(" ").split(/\s+/)).toEqual(words);
        },
      ),
    );
  });
});
