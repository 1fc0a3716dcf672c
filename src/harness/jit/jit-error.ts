/** The error the JIT engine throws for a bad rule set or disable list, with a stable code. */

/** Why a JIT engine could not be built. */
export type JitErrorCode = "unknown_rule" | "duplicate_rule" | "bad_option";

/** A JIT engine construction error: a stable code and a one-line message naming the value. */
export class JitError extends Error {
  readonly code: JitErrorCode;
  constructor(code: JitErrorCode, message: string) {
    super(message);
    this.name = "JitError";
    this.code = code;
  }
}
