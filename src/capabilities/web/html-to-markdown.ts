/**
 * A fetched HTML page as Markdown for the model: the cheap string pass (strip-html.ts) drops
 * scripts, styles, SVG and inline data; linkedom parses what is left; Mozilla Readability picks
 * the main text (the whole body when it finds no article); turndown writes Markdown (ATX
 * headings, fenced code, links kept and made absolute). The work is bounded by the text asked
 * for: the HTML is cut at an element boundary well past what `maxChars` of text needs, and the
 * article is pruned to about `maxChars` of text before turndown sees it. The three libraries are
 * loaded on first use, so a gateway that never fetches a page never loads them.
 */
import type TurndownService from "turndown";
import type { DomDocument, DomNode } from "./dom-types.js";
import { cutHtmlByText, documentShell, stripHtml } from "./strip-html.js";

/** A page converted to Markdown. */
export interface PageMarkdown {
  /** The page's title, on top of `markdown` as a `# ` heading; empty when it has none. */
  title: string;
  /** The Markdown, at most `maxChars` characters. */
  markdown: string;
  /** Whether the main text came from Readability (false: the whole body was converted). */
  article: boolean;
  /** Whether text was left out to stay within `maxChars`. */
  cut: boolean;
}

/** Options of {@link htmlToMarkdown}. */
export interface HtmlToMarkdownOptions {
  /** The page's final URL: relative links and images are resolved against it. */
  url: string;
  /** Characters of Markdown returned at most. */
  maxChars: number;
}

/**
 * Text kept for parsing: twice `maxChars` and at least {@link MIN_PARSED_TEXT} characters. The
 * margin is for what precedes the article (a menu, a header) and for Readability, which needs
 * enough of the article to recognise it.
 */
const PARSED_TEXT_PER_CHAR = 2;
const MIN_PARSED_TEXT = 20_000;
/**
 * Tags kept for parsing. Readability's cost grows faster than the element count (it queries the
 * tree again per candidate): 5,000 empty nested elements took it about a second, where a 1 MB
 * article page keeps about 2,000 tags after the string pass.
 */
const MAX_PARSED_TAGS = 5_000;
/** Text kept for turndown, as a multiple of `maxChars`: Markdown is never shorter than its text by much. */
const TEXT_MARGIN = 1.2;
/**
 * Readability's own threshold for an article: with less main text than this, what it found is
 * a guess (a list page, a form), and the whole body says more.
 */
const MIN_ARTICLE_CHARS = 500;

const TEXT_NODE = 3;
const ELEMENT_NODE = 1;

interface Libraries {
  parseHTML(html: string): { document: DomDocument };
  Readability: new (
    doc: DomDocument,
    options: { serializer: (node: DomNode) => DomNode; charThreshold: number },
  ) => { parse(): { title?: string | null; content?: DomNode | null; textContent?: string | null } | null };
  isProbablyReaderable(doc: DomDocument): boolean;
  turndown: TurndownService;
}

type Article = ReturnType<InstanceType<Libraries["Readability"]>["parse"]>;

/** Readability's main text of `doc`; undefined when it finds none or fails on the page. */
function readArticle(libs: Libraries, doc: DomDocument): NonNullable<Article> | undefined {
  try {
    return (
      new libs.Readability(doc, { serializer: (node) => node, charThreshold: MIN_ARTICLE_CHARS }).parse() ??
      undefined
    );
  } catch {
    return undefined; // a page that breaks Readability still has a body
  }
}

let libraries: Promise<Libraries> | undefined;

/** Loads linkedom, Readability and turndown once, on first use. */
function load(): Promise<Libraries> {
  libraries ??= (async () => {
    const [{ parseHTML }, { Readability, isProbablyReaderable }, { default: Turndown }] = await Promise.all([
      import("linkedom"),
      import("@mozilla/readability"),
      import("turndown"),
    ]);
    return {
      parseHTML: parseHTML as unknown as Libraries["parseHTML"],
      Readability: Readability as unknown as Libraries["Readability"],
      isProbablyReaderable: isProbablyReaderable as unknown as Libraries["isProbablyReaderable"],
      turndown: configure(
        new Turndown({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" }),
      ),
    };
  })();
  libraries.catch(() => {
    libraries = undefined; // a failed load is retried on the next call
  });
  return libraries;
}

/** The page base every turndown rule resolves links against; set per conversion (turndown is synchronous). */
let base = "";

function configure(turndown: TurndownService): TurndownService {
  turndown.remove(["nav", "footer", "aside", "form", "button", "select", "input", "dialog", "head"]);
  turndown.addRule("link", {
    filter: (node) => node.nodeName === "A" && node.getAttribute("href") !== null,
    replacement: (content, node) => {
      const text = content.trim();
      const href = absolute((node as unknown as DomNode).getAttribute?.("href") ?? "");
      if (text === "") return "";
      return href === undefined ? text : `[${text}](${href})`;
    },
  });
  turndown.addRule("image", {
    filter: "img",
    replacement: (_content, node) => {
      const element = node as unknown as DomNode;
      const alt = (element.getAttribute?.("alt") ?? "").replace(/\s+/g, " ").trim();
      const src = absolute(element.getAttribute?.("src") ?? "");
      return alt === "" ? "" : src === undefined ? alt : `![${alt}](${src})`;
    },
  });
  return turndown;
}

/** An http(s) URL resolved against the page; undefined for anything else (javascript:, data:, mailto: kept). */
function absolute(href: string): string | undefined {
  try {
    const url = new URL(href.trim(), base);
    return url.protocol === "http:" || url.protocol === "https:" || url.protocol === "mailto:"
      ? url.href
      : undefined;
  } catch {
    return undefined;
  }
}

/** Converts an HTML page to Markdown (see the file header). */
export async function htmlToMarkdown(html: string, options: HtmlToMarkdownOptions): Promise<PageMarkdown> {
  const libs = await load();
  const budget = Math.max(MIN_PARSED_TEXT, options.maxChars * PARSED_TEXT_PER_CHAR);
  const source = documentShell(cutHtmlByText(stripHtml(html), budget, MAX_PARSED_TAGS));
  const parsed = libs.parseHTML(source).document;
  const title = (parsed.title ?? "").replace(/\s+/g, " ").trim();
  // A page that is no article by Readability's cheap test (no paragraph of real text) is not
  // worth its expensive pass: the whole body says as much.
  const readable = libs.isProbablyReaderable(parsed);
  const found = readable ? readArticle(libs, parsed) : undefined;
  const article =
    (found?.textContent ?? "").trim().length >= MIN_ARTICLE_CHARS ? (found?.content ?? undefined) : undefined;
  // Readability changes the document it reads: after it, the fallback parses the page again.
  const root = article ?? (readable ? libs.parseHTML(source).document.body : parsed.body);
  const shownTitle = (found?.title || title).replace(/\s+/g, " ").trim();
  if (!root) return finish(shownTitle, "", article !== undefined, false, options.maxChars);
  const pruned = prune(root, Math.ceil(options.maxChars * TEXT_MARGIN)) < 0;
  base = options.url;
  const markdown = libs.turndown.turndown(root as unknown as TurndownService.Node);
  return finish(shownTitle, markdown, article !== undefined, pruned, options.maxChars);
}

/** Puts the title on top (unless the text starts with it) and cuts at `maxChars`, at a line end when one is near. */
function finish(
  title: string,
  body: string,
  article: boolean,
  pruned: boolean,
  maxChars: number,
): PageMarkdown {
  const text = body.trim();
  const heading = title !== "" && !text.startsWith(`# ${title}`) ? `# ${title}\n\n` : "";
  const whole = `${heading}${text}`;
  if (whole.length <= maxChars) return { title, markdown: whole, article, cut: pruned };
  const lineEnd = whole.lastIndexOf("\n", maxChars);
  const end = lineEnd > maxChars * 0.8 ? lineEnd : maxChars;
  return { title, markdown: whole.slice(0, end).trimEnd(), article, cut: true };
}

/**
 * Keeps the first `budget` characters of text under `node` (whitespace runs counted as one) and
 * removes every node after that point. Returns the budget left: negative when something was removed.
 */
function prune(node: DomNode, budget: number): number {
  let left = budget;
  const children = Array.from(node.childNodes);
  for (const child of children) {
    if (left < 0) {
      child.remove();
      continue;
    }
    if (child.nodeType === TEXT_NODE) left -= collapsedLength(child.data ?? "");
    else if (child.nodeType === ELEMENT_NODE) left = prune(child, left);
  }
  return left;
}

function collapsedLength(text: string): number {
  return text.length < 64 ? text.trim().length : text.replace(/\s+/g, " ").length;
}
