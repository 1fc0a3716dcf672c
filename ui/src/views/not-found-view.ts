/** The page's own not-found view, for a fragment it does not know. */
import { html } from "htm/preact";

/** Says the address is unknown and links back to the overview. */
export function NotFoundView({ path }: { path: string }) {
  return html`<section data-view="not-found" aria-labelledby="h-not-found">
    <h1 id="h-not-found">Not found</h1>
    <p>The page has no view at <code>${path}</code>.</p>
    <p><a href="#/overview">Go to the overview</a></p>
  </section>`;
}
