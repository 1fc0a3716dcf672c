/**
 * Which sandbox applies: each mode against a PATH without bwrap, with a bwrap that fails, and
 * with the real one (installed here and in CI); the probe runs once per binary; doctor's line.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BwrapProbe,
  chooseSandbox,
  describeSandbox,
  findOnPath,
  probeBwrap,
} from "../../../../src/harness/tools/exec/sandbox-choice.js";

let tmp: string;
let brokenDir: string;
let emptyDir: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), "switchyard-sandbox-"));
  emptyDir = path.join(tmp, "empty");
  brokenDir = path.join(tmp, "broken");
  await Promise.all([mkdir(emptyDir), mkdir(brokenDir)]);
  const fake = path.join(brokenDir, "bwrap");
  await writeFile(fake, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n");
  await chmod(fake, 0o755);
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("chooseSandbox", () => {
  it("none: never sandboxed, nothing probed", async () => {
    let probed = 0;
    const d = await chooseSandbox("none", {
      pathEnv: "/usr/bin",
      probe: async () => {
        probed++;
        return { ok: true };
      },
    });
    expect(d).toEqual({ type: "none", why: "tools.exec.sandbox is none: commands run unsandboxed" });
    expect(probed).toBe(0);
  });

  it("bwrap missing: auto runs unsandboxed, bwrap refuses, both saying to install bubblewrap", async () => {
    expect(await chooseSandbox("auto", { pathEnv: emptyDir })).toEqual({
      type: "none",
      why: "bwrap is not installed (install the bubblewrap package); commands run unsandboxed",
    });
    expect(await chooseSandbox("bwrap", { pathEnv: emptyDir })).toEqual({
      type: "unavailable",
      why: "tools.exec.sandbox is bwrap, but bwrap is not installed (install the bubblewrap package)",
    });
  });

  it("bwrap that does not work: auto falls back with its stderr, bwrap refuses with it", async () => {
    const fake = path.join(brokenDir, "bwrap");
    const auto = await chooseSandbox("auto", { pathEnv: brokenDir });
    expect(auto).toEqual({
      type: "none",
      why: `${fake} does not work here (bwrap: No permissions to create new namespace); commands run unsandboxed`,
    });
    const strict = await chooseSandbox("bwrap", { pathEnv: brokenDir });
    expect(strict.type).toBe("unavailable");
    expect(strict.why).toContain("tools.exec.sandbox is bwrap, but");
  });

  it("the real bwrap works here: auto and bwrap both use it", async () => {
    const real = findOnPath("bwrap", process.env.PATH);
    expect(real, "bubblewrap must be installed (.ci/run installs it)").toBeDefined();
    for (const mode of ["auto", "bwrap"] as const) {
      const d = await chooseSandbox(mode);
      expect(d).toMatchObject({ type: "bwrap", bwrapPath: real });
    }
  });

  it("uses the first bwrap on PATH and probes it with the injected probe", async () => {
    const seen: string[] = [];
    const probe = async (p: string): Promise<BwrapProbe> => {
      seen.push(p);
      return { ok: true };
    };
    const d = await chooseSandbox("bwrap", { pathEnv: `relative:${emptyDir}:${brokenDir}:/usr/bin`, probe });
    expect(d).toMatchObject({ type: "bwrap", bwrapPath: path.join(brokenDir, "bwrap") });
    expect(seen).toEqual([path.join(brokenDir, "bwrap")]);
  });
});

describe("probeBwrap", () => {
  it("runs a binary once: later calls share the first result", async () => {
    const counter = path.join(tmp, "count");
    const dir = path.join(tmp, "counting");
    await mkdir(dir);
    const fake = path.join(dir, "bwrap");
    await writeFile(fake, `#!/bin/sh\necho x >> ${counter}\nexit 0\n`);
    await chmod(fake, 0o755);
    const results = await Promise.all([probeBwrap(fake), probeBwrap(fake)]);
    expect(await probeBwrap(fake)).toEqual({ ok: true });
    expect(results).toEqual([{ ok: true }, { ok: true }]);
    expect((await readFile(counter, "utf8")).trim().split("\n")).toHaveLength(1);
  });
});

describe("describeSandbox", () => {
  it("says which sandbox applies, why, and whether there is network", () => {
    const bwrap = { type: "bwrap", bwrapPath: "/usr/bin/bwrap", why: "/usr/bin/bwrap works" } as const;
    expect(describeSandbox(bwrap, false)).toBe("sandbox: bwrap (/usr/bin/bwrap works), no network");
    expect(describeSandbox(bwrap, true)).toBe(
      "sandbox: bwrap (/usr/bin/bwrap works), network shared (tools.exec.network)",
    );
    expect(describeSandbox({ type: "none", why: "w" }, false)).toBe("sandbox: none (w)");
    expect(describeSandbox({ type: "unavailable", why: "w" }, false)).toBe("refuses every command: w");
  });
});
