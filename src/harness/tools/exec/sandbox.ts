/**
 * The bubblewrap sandbox a command runs in (`tools.exec.sandbox`): the argument list for `bwrap`,
 * built without touching the system. The command sees the whole system read-only, the workspace
 * read-write, a /tmp, /dev and /proc of its own, and no network (unless asked); folders named
 * in `hide` (the user's real home, the gateway's state) are covered by empty ones.
 *
 * No `--new-session`: the CommandRunner ends a command by signalling its process group, and
 * bwrap, its pid-namespace init and the shell all stay in that group, so SIGTERM/SIGKILL reach
 * every one of them; killing bwrap also ends the namespace (`--die-with-parent` on its init, and
 * a pid namespace dies with its init). The group has no controlling terminal (it is spawned in
 * a session of its own, stdin closed), so the TIOCSTI escape `--new-session` guards against does
 * not apply.
 */
import path from "node:path";

/**
 * HOME inside the sandbox: a folder in its private /tmp. Not the workspace, so caches and
 * dotfiles (`.npm`, `.gitconfig`, shell history) do not litter it and nothing of them persists
 * between commands; not the real home, which is hidden (it holds keys and tokens) and would be
 * read-only anyway.
 */
export const SANDBOX_HOME = "/tmp/home";

/** What the sandbox around one command is made of. */
export interface BwrapArgsOptions {
  /** The shell command line, run as `/bin/sh -c <command>` inside. */
  command: string;
  /** Absolute, real path of the workspace: the only folder the command may write (bound read-write). */
  workspaceDir: string;
  /** Absolute, real path the command starts in (the workspace or a folder under it). */
  cwd: string;
  /** Share the host's network. Default false: a network namespace of its own, with only loopback. */
  network?: boolean;
  /**
   * Absolute folders covered by an empty tmpfs (the real HOME, the gateway's home). A folder that
   * is `/`, the workspace or inside it, or under /tmp is left alone; the workspace stays visible when
   * it lies inside one of them. The caller passes only folders that exist. Default none.
   */
  hide?: readonly string[];
}

/**
 * The arguments after `bwrap` (see the file header): `--ro-bind / /`, fresh `/dev` and `/proc`,
 * a tmpfs `/tmp` holding SANDBOX_HOME, the `hide` folders covered, the workspace bound
 * read-write, every namespace unshared (the network too unless `network`), `--die-with-parent`,
 * `--chdir <cwd>`, then `/bin/sh -c <command>`. Pure.
 */
export function bwrapArgs(o: BwrapArgsOptions): string[] {
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"];
  args.push("--dir", SANDBOX_HOME);
  for (const dir of o.hide ?? []) {
    const folder = path.resolve(dir);
    // Under /tmp it is hidden already; inside the workspace it must stay visible.
    if (folder === "/" || within(folder, "/tmp") || within(folder, o.workspaceDir)) continue;
    args.push("--tmpfs", folder);
  }
  args.push("--bind", o.workspaceDir, o.workspaceDir, "--unshare-all");
  if (o.network === true) args.push("--share-net");
  args.push("--die-with-parent", "--chdir", o.cwd, "--", "/bin/sh", "-c", o.command);
  return args;
}

/** `folder` is `root` or lies under it. */
function within(folder: string, root: string): boolean {
  const relative = path.relative(root, folder);
  return relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}
