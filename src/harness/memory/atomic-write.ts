/**
 * Replacing a file in one step: the new content goes to a hidden temp file beside it, is synced,
 * and is renamed over the old one, so a reader (a person's editor, the memory index, a crash)
 * sees the old file or the new one, never half of it.
 */
import { randomBytes } from "node:crypto";
import { renameSync, rmSync, statSync } from "node:fs";
import { open, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { writeText } from "../../util/small-io.js";

/**
 * Temp names: random once per process, then counted (a random name per write cost ~20 µs), so a
 * temp file a crashed process left behind never collides with a new one.
 */
const TEMP_TAG = randomBytes(6).toString("hex");
let tempSeq = 0;

/**
 * Writes `content` (UTF-8) to `abs` atomically, keeping the permission bits of the file it
 * replaces (new files get 0600). `durable` (default true) flushes it to disk before the rename;
 * without it (a mirror of what the database holds) a power cut may leave the old file, never
 * half of one, and the temp file is written in one step (its mode then as the umask leaves it),
 * synchronously when small (util/small-io.ts). `abs` should be a real path: renaming over a symlink would replace the link, not its target.
 * The temp file is removed when anything fails.
 */
export async function writeFileAtomic(
  abs: string,
  content: string,
  options: { durable?: boolean } = {},
): Promise<void> {
  // A leading dot keeps the temp file out of the memory index and most listings.
  const temp = path.join(
    path.dirname(abs),
    `.${path.basename(abs)}.${TEMP_TAG}${(++tempSeq).toString(36)}.tmp`,
  );
  if (options.durable === false) {
    const mode = modeOf(abs);
    try {
      await writeText(temp, content, { mode, flag: "wx" });
      renameSync(temp, abs);
    } catch (err) {
      rmSync(temp, { force: true });
      throw err;
    }
    return;
  }
  const mode = await stat(abs).then(
    (s) => s.mode & 0o777,
    () => 0o600,
  );
  try {
    const handle = await open(temp, "wx", mode);
    try {
      await handle.chmod(mode); // open's mode passes through the umask
      await handle.writeFile(content, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, abs);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

/** The permission bits of the file at `abs`; 0600 when there is none (or it cannot be seen). */
function modeOf(abs: string): number {
  try {
    return (statSync(abs, { throwIfNoEntry: false })?.mode ?? 0o600) & 0o777;
  } catch {
    return 0o600;
  }
}
