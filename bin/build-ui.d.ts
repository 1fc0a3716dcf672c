/** One built file of the control page. */
export interface BuiltFile {
  /** Relative to the output folder, "/"-separated ("assets/main-ABC123.js"). */
  path: string;
  bytes: number;
  /** Its size gzipped at level 9 (as the gateway serves it). */
  gzipBytes: number;
}

/** What a page build produced. */
export interface UiBuild {
  ok: boolean;
  files: BuiltFile[];
  /** index.html, the stylesheet, the main script and the chunks it imports statically: what the first load transfers. */
  firstLoad: { files: string[]; bytes: number; gzipBytes: number } | undefined;
}

/** Builds ui/src into `outDir` (default `<root>/dist/ui`, emptied first); prints sizes unless `quiet` (default true). */
export function buildUi(options?: { root?: string; outDir?: string; quiet?: boolean }): UiBuild;
