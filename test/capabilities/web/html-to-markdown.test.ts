/**
 * A page's main text as Markdown: Readability keeps the article and drops menus, footers and
 * scripts; turndown writes ATX headings, fenced code and absolute links; the title goes on top;
 * a page without an article falls back to its whole body; the text is cut at maxChars.
 */
import { describe, expect, it } from "vitest";
import { htmlToMarkdown } from "../../../src/capabilities/web/html-to-markdown.js";

const PROSE =
  "Switchyard routes every message through a lane queue, so one session never runs two turns at once. ";

/** An article page with everything around it that a reader does not want. */
function articlePage(paragraphs = 8): string {
  const body = Array.from(
    { length: paragraphs },
    (_, i) => `<p>${PROSE.repeat(3)} Paragraph ${i} ends with <a href="/docs/p${i}">its link</a>.</p>`,
  ).join("\n");
  return `<!doctype html><html><head><title>Lanes explained | Example</title>
<style>.nav{color:red}</style><script>var tracking = "SCRIPT-TEXT";</script></head>
<body>
<nav class="menu"><ul><li><a href="/">Home</a></li><li><a href="/pricing">NAV-PRICING</a></li></ul></nav>
<article>
<h1>Lanes explained</h1>
<h2>Why one lane per session</h2>
${body}
<h3>An example</h3>
<pre><code>const lane = new LaneQueue({ pool });
await lane.enqueue(task);</code></pre>
<ul><li>first point</li><li>second point</li></ul>
</article>
<aside class="sidebar"><a href="/related">SIDEBAR-RELATED</a></aside>
<footer class="footer"><p>FOOTER-COPYRIGHT 2025</p></footer>
<script>document.write("LATE-SCRIPT")</script>
</body></html>`;
}

describe("htmlToMarkdown", () => {
  it("keeps the article's text, headings, links and code; drops nav, footer, sidebar and scripts", async () => {
    const md = await htmlToMarkdown(articlePage(), {
      url: "https://example.org/guide/lanes",
      maxChars: 20_000,
    });
    expect(md.article).toBe(true);
    expect(md.cut).toBe(false);
    expect(md.markdown.startsWith("# Lanes explained")).toBe(true);
    expect(md.markdown).toContain("## Why one lane per session");
    expect(md.markdown).toContain("### An example");
    expect(md.markdown).toContain("Paragraph 7 ends with [its link](https://example.org/docs/p7).");
    expect(md.markdown).toContain(
      "```\nconst lane = new LaneQueue({ pool });\nawait lane.enqueue(task);\n```",
    );
    expect(md.markdown).toMatch(/^- {1,3}first point$/m);
    for (const unwanted of [
      "NAV-PRICING",
      "FOOTER-COPYRIGHT",
      "SIDEBAR-RELATED",
      "SCRIPT-TEXT",
      "LATE-SCRIPT",
      "color:red",
    ])
      expect(md.markdown).not.toContain(unwanted);
  });

  it("puts the title on top when the text does not start with it", async () => {
    const html = `<html><head><title>Release notes</title></head><body><div><p>${PROSE.repeat(8)}</p><p>${PROSE.repeat(8)}</p></div></body></html>`;
    const md = await htmlToMarkdown(html, { url: "https://example.org/", maxChars: 20_000 });
    expect(md.markdown.split("\n")[0]).toBe("# Release notes");
    expect(md.markdown).toContain("Switchyard routes every message");
  });

  it("falls back to the whole body, without nav and footer, when Readability finds no article", async () => {
    const html = `<html><head><title>Short</title></head><body><nav>NAV-ONLY</nav><p>Just a line, <a href="x">a link</a>.</p><footer>FOOT</footer></body></html>`;
    const md = await htmlToMarkdown(html, { url: "https://example.org/a/b", maxChars: 20_000 });
    expect(md.article).toBe(false);
    expect(md.markdown).toBe("# Short\n\nJust a line, [a link](https://example.org/a/x).");
  });

  it("reads a fragment and a page without <head> or <body>", async () => {
    const options = { url: "https://example.org/", maxChars: 20_000 };
    expect((await htmlToMarkdown("<p>No such page</p>", options)).markdown).toBe("No such page");
    const bare = await htmlToMarkdown("<html><title>T</title><p>Only this.</p></html>", options);
    expect(bare.markdown).toBe("# T\n\nOnly this.");
  });

  it("drops javascript: links and images without alt text, keeps an image's alt and absolute URL", async () => {
    const html = `<html><body><p><a href="javascript:alert(1)">click</a> <img src="/i.png"> <img src="/d.png" alt="a diagram"></p></body></html>`;
    const md = await htmlToMarkdown(html, { url: "https://example.org/", maxChars: 20_000 });
    expect(md.markdown).toMatch(/^click +!\[a diagram\]\(https:\/\/example\.org\/d\.png\)$/);
  });

  it("converts 2 MB of empty nested elements in bounded work (no Readability pass, parsing capped)", async () => {
    // Readability alone took about 30 s of CPU on this page: it would outlive the test's 5 s limit.
    const html = `<html><body>${"<div><span></span></div>".repeat(80_000)}<p>The end.</p></body></html>`;
    const md = await htmlToMarkdown(html, { url: "https://example.org/", maxChars: 20_000 });
    expect(md.article).toBe(false);
    expect(md.markdown).toBe("");
  });

  it("returns at most maxChars characters and says the text was cut", async () => {
    const md = await htmlToMarkdown(articlePage(200), { url: "https://example.org/", maxChars: 3_000 });
    expect(md.cut).toBe(true);
    expect(md.markdown.length).toBeLessThanOrEqual(3_000);
    expect(md.markdown.length).toBeGreaterThan(2_000);
    expect(md.markdown.startsWith("# Lanes explained")).toBe(true);
    expect(md.markdown).toContain("Paragraph 0 ends");
    expect(md.markdown).not.toContain("Paragraph 199");
  });
});
