/** The token leaves the address for session storage; a stored one is used; a 401 forgets it. */
import { describe, expect, it } from "vitest";
import { LANDING, TOKEN_KEY, captureToken, forgetToken } from "../../ui/src/lib/token.js";

function seams(hash: string, stored?: string) {
  const map = new Map<string, string>(stored === undefined ? [] : [[TOKEN_KEY, stored]]);
  const replaced: Array<string | null | undefined> = [];
  return {
    map,
    replaced,
    seams: {
      location: { hash },
      storage: {
        getItem: (k: string) => map.get(k) ?? null,
        setItem: (k: string, v: string) => void map.set(k, v),
        removeItem: (k: string) => void map.delete(k),
      },
      history: { replaceState: (_d: unknown, _u: string, url?: string | null) => void replaced.push(url) },
    },
  };
}

describe("captureToken", () => {
  it("stores a fragment token (percent-decoded) and replaces the address with the overview", () => {
    const s = seams(`#token=${encodeURIComponent("s3cr+t/=x")}`);
    expect(captureToken(s.seams)).toBe("s3cr+t/=x");
    expect(s.map.get(TOKEN_KEY)).toBe("s3cr+t/=x");
    expect(s.replaced).toEqual([LANDING]);
    expect(LANDING).toBe("/ui/#/overview");
  });

  it("replaces a stored token with the fragment's and ignores what follows an &", () => {
    const s = seams("#token=new&x=1", "old");
    expect(captureToken(s.seams)).toBe("new");
  });

  it("uses the stored token when the fragment is a route, and leaves the address alone", () => {
    const s = seams("#/sessions", "kept");
    expect(captureToken(s.seams)).toBe("kept");
    expect(s.replaced).toEqual([]);
  });

  it("removes an empty or malformed token from the address; nothing stored means no token", () => {
    const empty = seams("#token=");
    expect(captureToken(empty.seams)).toBeUndefined();
    expect(empty.replaced).toEqual([LANDING]);
    const bad = seams("#token=%E0%A4%A");
    expect(captureToken(bad.seams)).toBe("%E0%A4%A");
    expect(captureToken(seams("").seams)).toBeUndefined();
  });

  it("forgets the token", () => {
    const s = seams("", "t");
    forgetToken(s.seams.storage);
    expect(captureToken(s.seams)).toBeUndefined();
  });
});
