/** The error a tool throws for a failure the model can act on; the boundary turns it into a result. */
import type { ToolErrorCode } from "./types.js";

/** A tool error the model can act on: a stable code and a message that lists what is valid. */
export class ToolError extends Error {
  readonly code: ToolErrorCode;
  constructor(code: ToolErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "ToolError";
    this.code = code;
  }
}
