/** The error of the memory index itself (not of a query). */

/** Why the index cannot serve: `closed` (after close()) or `unavailable` (the database file). */
export type MemoryIndexErrorCode = "closed" | "unavailable";

/** A failure of the index itself (not of a query): see {@link MemoryIndexErrorCode}. */
export class MemoryIndexError extends Error {
  readonly code: MemoryIndexErrorCode;
  constructor(code: MemoryIndexErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "MemoryIndexError";
    this.code = code;
  }
}
