/**
 * `switchyard ui [--open]`: the control page's address for the running gateway. The token rides
 * in the URL fragment (`/ui/#token=…`), which a browser never sends to the server (so it is in no
 * request line and no log); the page moves it into its session storage and off the address bar.
 * With `--open`, the system's opener (xdg-open, open, start) is started with it too.
 */
import { spawn } from "node:child_process";
import { type FoundGateway, findGateway } from "./find-gateway.js";
import { GatewayRequestError, requestGateway } from "./gateway-client.js";
import type { CliOptions } from "./main.js";

/** The page's address for a found gateway: the token (if any) in the fragment. */
export function controlPageUrl(found: Pick<FoundGateway, "url" | "token">): string {
  return `${found.url}/ui/${found.token ? `#token=${encodeURIComponent(found.token)}` : ""}`;
}

/** Runs `switchyard ui`; resolves with the exit code (1: no gateway answers). */
export async function runUi(options: CliOptions): Promise<number> {
  const found = findGateway(options);
  try {
    const res = await requestGateway(found, "/v1/admin/overview", { timeoutMs: 5_000 });
    await res.body?.cancel();
    if (res.status === 403)
      process.stderr.write(
        "switchyard ui: this gateway has no gateway.auth.token, so the page answers only on the gateway's own machine\n",
      );
    else if (!res.ok)
      process.stderr.write(`switchyard ui: the gateway answered ${res.status} to /v1/admin/overview\n`);
  } catch (err) {
    if (!(err instanceof GatewayRequestError)) throw err;
    process.stderr.write(`switchyard ui: ${err.message}\n`);
    return 1;
  }
  const url = controlPageUrl(found);
  process.stdout.write(`${url}\n`);
  if (options.open) openInBrowser(url);
  return 0;
}

/** Starts the platform's URL opener, detached; a missing opener is one line on stderr. */
function openInBrowser(url: string): void {
  const [cmd, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  const child = spawn(cmd, args as string[], { detached: true, stdio: "ignore" });
  child.on("error", (err) =>
    process.stderr.write(
      `switchyard ui: could not start ${cmd} (${err.message}); open the address above yourself\n`,
    ),
  );
  child.unref();
}
