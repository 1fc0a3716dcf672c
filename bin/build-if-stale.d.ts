/** True when `root`'s dist/ is missing or older than a source file (src/, ui/src) or a tsconfig (default: this package). */
export function isStale(root?: string): boolean;
/** Builds when stale (in a source checkout); false when the build failed. */
export function buildIfStale(): boolean;
/** Compiles src/ into dist/ and the control page into dist/ui, and stamps it; false when the build failed. */
export function build(options?: { quiet?: boolean }): boolean;
