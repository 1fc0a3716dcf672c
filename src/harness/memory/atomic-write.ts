/**
 * Replacing a file in one step: the new content goes to a hidden temp file beside it, is synced,
 * and is renamed over the old one, so a reader (a person's editor, the memory index, a crash)
 * sees the old file or the new one, never half of it.
 */
import { randomBytes } from "node:crypto";
import { open, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * Writes `content` (UTF-8) to `abs` atomically, keeping the permission bits of the file it
 * replaces (new files get 0600). `durable` (default true) flushes it to disk before the rename;
 * without it (a mirror of what the database holds) a power cut may leave the old file, never
 * half of one, and the temp file is written in one step (its mode then as the umask leaves it).
 * `abs` should be a real path: renaming over a symlink would replace the link, not its target.
 * The temp file is removed when anything fails.
 */
export async function writeFileAtomic(
  abs: string,
  content: string,
  options: { durable?: boolean } = {},
): Promise<void> {
  const mode = await stat(abs).then(
    (s) => s.mode & 0o777,
    () => 0o600,
  );
  // A leading dot keeps the temp file out of the memory index and most listings.
  const temp = path.join(path.dirname(abs), `.${path.basename(abs)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    if (options.durable === false) {
      await writeFile(temp, content, { encoding: "utf8", mode, flag: "wx" });
      await rename(temp, abs);
      return;
    }
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
