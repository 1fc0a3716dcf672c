/**
 * The string pass before parsing: scripts, styles, SVG, noscript, templates, comments and data:
 * URIs go; an element never closed drops the rest; hostile input costs one pass (a quadratic
 * scan of these 2 MB inputs would not finish within the test's time limit).
 */
import { describe, expect, it } from "vitest";
import { cutHtmlByText, documentShell, stripHtml } from "../../../src/capabilities/web/strip-html.js";

describe("stripHtml", () => {
  it("removes scripts, styles, svg, noscript, template, iframes and comments with their content", () => {
    const html = [
      "<p>keep 1</p>",
      '<script type="module">if (a < b) document.write("</p>")</script>',
      "<STYLE media=all>p { color: red }</STYLE >",
      '<svg viewBox="0 0 1 1"><path d="M0 0"/><text>icon</text></svg>',
      "<noscript><img src=/pixel></noscript>",
      "<template><p>card</p></template>",
      '<iframe src="/ad"></iframe>',
      "<!-- a <script> in a comment -->",
      "<p>keep 2</p>",
    ].join("");
    expect(stripHtml(html)).toBe("<p>keep 1</p><p>keep 2</p>");
  });

  it("keeps elements whose names only start like a dropped one", () => {
    const html = "<scripted>a</scripted><svgs>b</svgs><styles>c</styles>";
    expect(stripHtml(html)).toBe(html);
  });

  it("removes data: URIs from attributes and CSS, leaving an empty value", () => {
    const html = `<img src="data:image/png;base64,iVBORw0KGgo=" alt="x"><a href='data:text/html,<b>hi</b>'>t</a><div style="background:url(data:image/gif;base64,R0lGOD==)">d</div>`;
    expect(stripHtml(html)).toBe(`<img src="" alt="x"><a href=''>t</a><div style="background:url()">d</div>`);
  });

  it("drops the rest of the page after a script or comment that is never closed", () => {
    expect(stripHtml("<p>a</p><script>var x = 1; <p>b</p>")).toBe("<p>a</p>");
    expect(stripHtml("<p>a</p><!-- never closed <p>b</p>")).toBe("<p>a</p>");
  });

  it("makes one pass over hostile input", () => {
    const unclosed = "<script>".repeat(250_000);
    expect(stripHtml(`<p>x</p>${unclosed}`)).toBe("<p>x</p>");
    const comments = "<!--".repeat(500_000);
    expect(stripHtml(comments)).toBe("");
    const data = `<img src="${"data:".repeat(400_000)}`;
    expect(stripHtml(data).length).toBeLessThanOrEqual(data.length);
  });
});

describe("cutHtmlByText", () => {
  it("cuts after the last closing tag before the text budget runs out", () => {
    const html = "<h1>Title</h1><p>first paragraph</p><p>second paragraph</p>";
    expect(cutHtmlByText(html, 25)).toBe("<h1>Title</h1><p>first paragraph</p>");
    expect(cutHtmlByText(html, 1_000)).toBe(html);
  });

  it("cuts after maxTags tags too", () => {
    const html = "<p>a</p><p>b</p><p>c</p>";
    expect(cutHtmlByText(html, 1_000, 4)).toBe("<p>a</p><p>b</p>");
  });

  it("counts only text between tags, and a stray < as text", () => {
    const html = `<a href="${"x".repeat(500)}">ab</a><p>a < b</p><p>tail</p>`;
    expect(cutHtmlByText(html, 8)).toBe(`<a href="${"x".repeat(500)}">ab</a><p>a < b</p>`);
    // No tag at all: nothing to cut at, and one text node is cheap to parse.
    expect(cutHtmlByText("<".repeat(2_000_000), 10).length).toBe(2_000_000);
  });
});

describe("documentShell", () => {
  it.each([
    ["<html><title>T</title><p>x</p></html>"],
    ["<!doctype html><title>T</title><p>x</p>"],
    ["<html><head><title>T</title></head><p>x</p></html>"],
    ['<HTML lang="en"><HEAD><TITLE>T</TITLE></HEAD><BODY class="c"><p>x</p></BODY></HTML>'],
  ])("writes one shell around %s", (html) => {
    expect(documentShell(html)).toBe("<html><head><title>T</title></head><body><p>x</p></body></html>");
  });

  it("writes an empty title for a fragment", () => {
    expect(documentShell("<p>x</p>")).toBe("<html><head><title></title></head><body><p>x</p></body></html>");
  });
});
