/**
 * The bwrap argument list, as a pure function: every rule of the sandbox (read-only system,
 * writable workspace, private /tmp with HOME, hidden folders, namespaces, network, cwd).
 */
import { describe, expect, it } from "vitest";
import { SANDBOX_HOME, bwrapArgs } from "../../../../src/harness/tools/exec/sandbox.js";

const base = { command: "echo hi", workspaceDir: "/srv/ws", cwd: "/srv/ws/sub" };

/** The pairs `flag value…` of an argument list, as one string, for order-aware checks. */
const joined = (args: string[]): string => args.join(" ");

describe("bwrapArgs", () => {
  it("binds the system read-only, then fresh /dev, /proc and /tmp holding HOME, then the workspace read-write", () => {
    const args = bwrapArgs(base);
    expect(joined(args)).toBe(
      `--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --dir ${SANDBOX_HOME} --bind /srv/ws /srv/ws --unshare-all --die-with-parent --chdir /srv/ws/sub -- /bin/sh -c echo hi`,
    );
    expect(SANDBOX_HOME.startsWith("/tmp/")).toBe(true);
  });

  it("keeps the command one argument, unquoted", () => {
    const args = bwrapArgs({ ...base, command: "echo 'a b' && ls \"$HOME\"" });
    expect(args.slice(-3)).toEqual(["/bin/sh", "-c", "echo 'a b' && ls \"$HOME\""]);
  });

  it("has no network unless asked: --share-net only with network true", () => {
    expect(bwrapArgs(base)).not.toContain("--share-net");
    expect(bwrapArgs({ ...base, network: false })).not.toContain("--share-net");
    const shared = bwrapArgs({ ...base, network: true });
    expect(shared.indexOf("--share-net")).toBe(shared.indexOf("--unshare-all") + 1);
  });

  it("never starts a new session, so the process-group kill reaches the sandboxed processes", () => {
    expect(bwrapArgs({ ...base, network: true })).not.toContain("--new-session");
  });

  it("covers hidden folders with a tmpfs before the workspace is bound (the workspace inside one stays visible)", () => {
    const args = joined(
      bwrapArgs({ ...base, workspaceDir: "/home/u/.sy/ws", cwd: "/home/u/.sy/ws", hide: ["/home/u"] }),
    );
    expect(args).toContain("--tmpfs /home/u --bind /home/u/.sy/ws /home/u/.sy/ws");
  });

  it("does not hide /, anything under /tmp, the workspace or a folder inside it", () => {
    const args = bwrapArgs({
      ...base,
      hide: ["/", "/tmp/gw", "/tmp", "/srv/ws", "/srv/ws/state", "/srv/wsx", "/root"],
    });
    const hidden = args.flatMap((a, i) => (a === "--tmpfs" ? [args[i + 1]] : []));
    expect(hidden).toEqual(["/tmp", "/srv/wsx", "/root"]);
  });
});
