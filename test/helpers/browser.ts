/**
 * A headless Chromium for the control page's tests: Debian's `chromium` (installed by .ci/run
 * when missing) driven by playwright-core, with the flags this machine's closed network needs
 * (no background networking, no component updates). Playwright gives each launch a fresh
 * profile and removes it on close.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Where Chromium is: CHROMIUM_PATH, else Debian's /usr/bin/chromium. */
export function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
  if (!existsSync(path))
    throw new Error(
      `no Chromium at ${path}: install Debian's package (apt-get install chromium; .ci/run does) or set CHROMIUM_PATH`,
    );
  return path;
}

/** Launches headless Chromium. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
}
