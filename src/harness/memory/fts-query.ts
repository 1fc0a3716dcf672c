/**
 * Turning what a person or model typed into an FTS5 MATCH expression that cannot fail: every
 * term is quoted as a phrase, so FTS5 syntax in it (`"`, `-`, `:`, `*`, `^`, parentheses,
 * AND/OR/NOT/NEAR) is searched for as text, never parsed.
 */

/** Terms of a query taken at most; the rest is ignored. */
export const MAX_QUERY_TERMS = 32;

/**
 * The whitespace-separated terms of `query` that hold at least one letter or digit (a term of
 * punctuation alone can match nothing), in order, without repeats, at most MAX_QUERY_TERMS.
 */
export function queryTerms(query: string): string[] {
  const terms = query.split(/\s+/).filter((t) => /[\p{L}\p{N}]/u.test(t));
  return [...new Set(terms)].slice(0, MAX_QUERY_TERMS);
}

/**
 * An FTS5 expression for `terms`: each one a quoted phrase (inner `"` doubled), joined so that
 * all must match (`AND`) or any may (`OR`). Undefined for no terms.
 */
export function ftsExpression(terms: readonly string[], join: "AND" | "OR"): string | undefined {
  if (terms.length === 0) return undefined;
  return terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(` ${join} `);
}
