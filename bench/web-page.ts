/**
 * A realistic ~1 MB article page for the web_fetch benchmark, built deterministically: what a
 * real news or docs page weighs — inline scripts (bundles, JSON state, analytics), styles,
 * inline SVG icons, base64 images, a mega-menu, a sidebar and a footer full of links — around
 * an article of about 45 KB of text with headings, links, lists and code.
 */

/** A deterministic pseudo-random source (mulberry32), so the page is the same on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const WORDS =
  "the gateway routes each message through a lane queue so that one session never runs two turns at once while the model answers tools are called and results are folded back into the context window before compaction keeps the newest turns verbatim and summarises older ones with every identifier kept".split(
    " ",
  );

function words(next: () => number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(next() * WORDS.length)] as string);
  return out.join(" ");
}

/** About `bytes` of minified-looking JavaScript. */
function script(next: () => number, bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const part = `function f${i}(a,b){var c=a+"${words(next, 3)}";if(b<${i})return c.split("").reverse().join("");return document.querySelector("#n${i}")&&window.__s${i % 7}.push({k:c,v:b*${i}})}`;
    parts.push(part);
    size += part.length;
  }
  return parts.join(";");
}

function css(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const part = `.c${i}{margin:${i % 9}px 0 ${i % 5}px;padding:0 ${i % 13}px;color:#${(i * 2654435761).toString(16).slice(-6).padStart(6, "0")};font:400 ${12 + (i % 8)}px/1.5 system-ui,sans-serif}.c${i}:hover>a[href^="/t"]{text-decoration:underline}`;
    parts.push(part);
    size += part.length;
  }
  return parts.join("");
}

function svgIcon(i: number): string {
  const path = Array.from(
    { length: 40 },
    (_, k) => `L${(i * 7 + k * 13) % 24}.${k % 10} ${(k * 5) % 24}.${i % 10}`,
  ).join(" ");
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16" height="16" aria-hidden="true"><path d="M0 0 ${path} Z" fill="currentColor"/></svg>`;
}

function base64Image(next: () => number, bytes: number): string {
  const raw = Buffer.alloc(Math.floor((bytes * 3) / 4));
  for (let i = 0; i < raw.length; i++) raw[i] = Math.floor(next() * 256);
  return `data:image/png;base64,${raw.toString("base64")}`;
}

function nav(next: () => number): string {
  const sections: string[] = [];
  for (let s = 0; s < 12; s++) {
    const links = Array.from(
      { length: 25 },
      (_, i) => `<li class="c${i}"><a href="/topics/${s}/${i}">${svgIcon(i)}${words(next, 2)}</a></li>`,
    );
    sections.push(`<li><button>${words(next, 1)}</button><ul class="mega">${links.join("")}</ul></li>`);
  }
  return `<header class="site"><a href="/" class="logo">${svgIcon(0)}Example News</a><nav aria-label="Main"><ul>${sections.join("")}</ul></nav></header>`;
}

function article(next: () => number): string {
  const out: string[] = [
    `<h1>How the gateway keeps sessions apart</h1>`,
    `<p class="byline">By A. Writer</p>`,
  ];
  for (let section = 0; section < 16; section++) {
    out.push(`<h2>Part ${section + 1}: ${words(next, 4)}</h2>`);
    for (let p = 0; p < 7; p++) {
      const link = `<a href="/docs/part-${section}-${p}">${words(next, 3)}</a>`;
      out.push(`<p>${words(next, 40)} ${link} ${words(next, 25)} <em>${words(next, 2)}</em>.</p>`);
    }
    if (section % 3 === 0)
      out.push(
        `<pre><code class="language-ts">const lane = new LaneQueue({ pool });\nawait lane.enqueue({ sessionKey: "s${section}" });</code></pre>`,
      );
    if (section % 4 === 1)
      out.push(`<ul>${Array.from({ length: 5 }, () => `<li>${words(next, 8)}</li>`).join("")}</ul>`);
    if (section % 5 === 2)
      out.push(
        `<figure><img src="${base64Image(next, 12_000)}" alt="diagram ${section}"><figcaption>${words(next, 6)}</figcaption></figure>`,
      );
  }
  return `<article><div class="content">${out.join("\n")}</div></article>`;
}

function sidebar(next: () => number): string {
  const items = Array.from(
    { length: 60 },
    (_, i) =>
      `<li><a href="/related/${i}"><img src="${base64Image(next, 600)}" alt="">${words(next, 6)}</a></li>`,
  );
  return `<aside class="related"><h3>Related</h3><ul>${items.join("")}</ul><div class="ad"><iframe src="/ads/1"></iframe></div></aside>`;
}

function footer(next: () => number): string {
  const columns = Array.from(
    { length: 8 },
    (_, c) =>
      `<div class="col"><h4>${words(next, 1)}</h4><ul>${Array.from({ length: 20 }, (_, i) => `<li><a href="/f/${c}/${i}">${words(next, 2)}</a></li>`).join("")}</ul></div>`,
  );
  return `<footer>${columns.join("")}<p>© Example News. ${words(next, 20)}</p></footer>`;
}

/**
 * The benchmark page: about 1 MB of HTML, of which the article's text is about 45 KB. The
 * article's own heading is "How the gateway keeps sessions apart".
 */
export function benchArticlePage(): string {
  const next = random(42);
  const head = [
    `<meta charset="utf-8"><title>How the gateway keeps sessions apart | Example News</title>`,
    `<meta name="viewport" content="width=device-width">`,
    `<style>${css(160_000)}</style>`,
    `<script>window.__STATE__=${JSON.stringify({ items: Array.from({ length: 900 }, (_, i) => ({ id: i, title: words(next, 8), tags: [words(next, 1)] })) })}</script>`,
    `<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"How the gateway keeps sessions apart"}</script>`,
    `<script>${script(next, 180_000)}</script>`,
    `<!-- build ${words(next, 30)} -->`,
  ];
  const body = [
    nav(next),
    `<noscript><img src="/pixel.gif" alt=""></noscript>`,
    `<main><div class="layout">`,
    article(next),
    sidebar(next),
    `</div></main>`,
    footer(next),
    `<template id="card"><div class="card">${words(next, 20)}</div></template>`,
    `<script>${script(next, 250_000)}</script>`,
    `<script src="/app.js" async></script>`,
  ];
  return `<!doctype html><html lang="en"><head>${head.join("\n")}</head><body class="c1">${body.join("\n")}</body></html>`;
}
