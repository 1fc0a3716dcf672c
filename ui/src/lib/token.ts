/**
 * The page's token: it arrives once in the address's fragment (`/ui/#token=…`, never sent to the
 * server), moves into session storage, and leaves the address bar. Every API call sends it as a
 * Bearer header; a 401 forgets it.
 */

/** The session-storage key that holds the token. */
export const TOKEN_KEY = "switchyard.token";

/** Where the page lands once the token left the address bar. */
export const LANDING = "/ui/#/overview";

/** What {@link captureToken} needs of the browser (window.location, sessionStorage, history). */
export interface TokenSeams {
  location: { hash: string };
  storage: {
    getItem(key: string): string | null;
    setItem(key: string, value: string): void;
    removeItem(key: string): void;
  };
  history: { replaceState(data: unknown, unused: string, url?: string | null): void };
}

/**
 * On load: a fragment `#token=…` (percent-encoded, maybe followed by `&…`) is stored and the
 * address replaced by {@link LANDING}. Returns the token to use (the captured one, else the
 * stored one), or undefined when there is none. An empty `#token=` is removed but not stored.
 */
export function captureToken(seams: TokenSeams): string | undefined {
  const { hash } = seams.location;
  if (hash.startsWith("#token=")) {
    const raw = hash.slice("#token=".length).split("&")[0] ?? "";
    let token = raw;
    try {
      token = decodeURIComponent(raw);
    } catch {
      // Not valid percent-encoding: the text as it stands is the best guess.
    }
    if (token !== "") seams.storage.setItem(TOKEN_KEY, token);
    seams.history.replaceState(null, "", LANDING);
  }
  const stored = seams.storage.getItem(TOKEN_KEY);
  return stored === null || stored === "" ? undefined : stored;
}

/** Stores a token typed into the login form. */
export function storeToken(storage: TokenSeams["storage"], token: string): void {
  storage.setItem(TOKEN_KEY, token);
}

/** Forgets the token (a 401). */
export function forgetToken(storage: TokenSeams["storage"]): void {
  storage.removeItem(TOKEN_KEY);
}
