import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  htmlToText,
  markdownToPlainText,
  markdownToTelegramHtml,
  renderTelegramChunks,
} from "../../../src/channels/telegram/format.js";
import { parseTelegramHtml } from "../../fakes/telegram-html.js";

describe("markdownToTelegramHtml", () => {
  it.each([
    ["**bold** and *italic*", "<b>bold</b> and <i>italic</i>"],
    [
      "__bold__ _it_ ~~gone~~ ||secret||",
      "<b>bold</b> <i>it</i> <s>gone</s> <tg-spoiler>secret</tg-spoiler>",
    ],
    ["use `a < b && c`", "use <code>a &lt; b &amp;&amp; c</code>"],
    [
      "see [the docs](https://example.com/a?b=1&c=2)",
      'see <a href="https://example.com/a?b=1&amp;c=2">the docs</a>',
    ],
    ["[x](javascript:alert(1))", "[x](javascript:alert(1))"],
    ["# Title", "<b>Title</b>"],
    ["- one\n- two", "• one\n• two"],
    ["> quoted\n> more", "<blockquote>quoted\nmore</blockquote>"],
    ["snake_case_name and 2 * 3 * 4", "snake_case_name and 2 * 3 * 4"],
    ["a ** b ** c", "a ** b ** c"],
    ["<script>&amp;", "&lt;script&gt;&amp;amp;"],
    ["**bold with *italic* inside**", "<b>bold with <i>italic</i> inside</b>"],
  ])("%s", (md, html) => {
    expect(markdownToTelegramHtml(md)).toBe(html);
  });

  it("renders fenced code as pre/code with the language, escaped, markup untouched", () => {
    expect(markdownToTelegramHtml("```ts\nconst a = x < 1 && **y**;\n```")).toBe(
      '<pre><code class="language-ts">const a = x &lt; 1 &amp;&amp; **y**;</code></pre>',
    );
    expect(markdownToTelegramHtml("```\nplain\n```")).toBe("<pre>plain</pre>");
    expect(markdownToTelegramHtml("```sh\nunclosed")).toBe(
      '<pre><code class="language-sh">unclosed</code></pre>',
    );
  });

  it("always produces HTML Telegram accepts, whatever the model writes", () => {
    const piece = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.constantFrom(
        "**",
        "*",
        "_",
        "__",
        "~~",
        "||",
        "`",
        "```",
        "[a](http://127.0.0.1/a)",
        "<b>",
        "&",
        "&amp;",
        "\n",
        "> ",
        "# ",
        "- ",
      ),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const md = pieces.join("");
        const html = markdownToTelegramHtml(md);
        const parsed = parseTelegramHtml(html);
        expect(parsed.text).toBe(htmlToText(html, 0));
      }),
      { numRuns: 500 },
    );
  });
});

describe("renderTelegramChunks", () => {
  it("keeps a long reply's code block intact in every chunk, each within 4096 visible characters", () => {
    const code = Array.from({ length: 300 }, (_, i) => `  result.push(compute(${i}) & mask);`).join("\n");
    const md = `# Report\n\n${"Some **prose** here. ".repeat(200)}\n\n\`\`\`js\n${code}\n\`\`\`\n\nDone.`;
    const chunks = renderTelegramChunks(md, 4096);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      const parsed = parseTelegramHtml(chunk.html);
      expect(parsed.text.length).toBeLessThanOrEqual(4096);
      expect(parsed.text).toBe(chunk.text);
    }
    const codeChunks = chunks.filter((c) => c.html.includes("<pre>"));
    expect(codeChunks.length).toBeGreaterThan(1);
    for (const c of codeChunks) expect(c.html).toContain('<code class="language-js">');
  });

  it("visible text never exceeds the limit for any input", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 3000 }), fc.integer({ min: 40, max: 500 }), (md, max) => {
        for (const chunk of renderTelegramChunks(md, max)) {
          expect(parseTelegramHtml(chunk.html).text.length).toBeLessThanOrEqual(max);
          expect(chunk.text.length).toBeLessThanOrEqual(max);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("htmlToText", () => {
  it("appends link targets when they fit, drops them when they would not", () => {
    const html = '<a href="https://example.com">docs</a>';
    expect(htmlToText(html)).toBe("docs (https://example.com)");
    expect(htmlToText(html, 10)).toBe("docs");
    expect(markdownToPlainText("**a** &lt; `b`")).toBe("a &lt; b");
  });
});
