/**
 * A terminal user sees background messages: a real gateway on the simulator (no key), a real
 * `switchyard chat`, and a cron job with `--deliver last` run by `switchyard cron run`. Its
 * answer reaches the chat's mailbox and the chat prints it, labelled; the gateway then restarts,
 * a job run while it is down is answered as it comes back, and the chat, reconnected, prints
 * that once, without printing anything it already showed again.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type GatewayProcess, spawnGateway } from "../helpers/gateway-process.js";
import { until } from "../helpers/until.js";
import { closedPort, removeTempDirs, runCli, startCli } from "../cli/cli-process.js";

const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;

describe("switchyard chat and the mailbox", () => {
  const home = mkdtempSync(join(tmpdir(), "sy-chat-bg-"));
  let gw: GatewayProcess | undefined;
  afterAll(async () => {
    await gw?.kill("SIGKILL");
    rmSync(home, { recursive: true, force: true });
    removeTempDirs();
  });

  /** Adds a one-shot job delivering to the chat that last wrote, and marks it due now. */
  async function runJob(name: string, message: string): Promise<void> {
    const add = await runCli([
      "cron",
      "add",
      "--home",
      home,
      "--name",
      name,
      "--at",
      "in 20m",
      "--message",
      message,
      "--deliver",
      "last",
    ]);
    expect(add.err).toBe("");
    const run = await runCli(["cron", "run", name, "--home", home]);
    expect(run.code).toBe(0);
  }

  it("prints a cron answer delivered to the chat, and after a restart what came while it was away, once", async () => {
    // One port for both gateways: the chat reconnects to the address it was given.
    const port = String(await closedPort());
    gw = await spawnGateway(["--home", home, "--port", port]);
    const chat = startCli(["chat", "--url", gw.url, "--sender", "ann"]);
    await until(() => chat.out().includes("Ctrl-D to quit"), "the chat to connect", 20_000);
    chat.type("hi\n");
    await until(() => chat.out().includes("agent> Simulated reply"), "the answer to hi", 20_000);

    await runJob("kettle", "Tell ann the kettle is on");
    // The scheduler picks a due job up within 5 s.
    await until(() => chat.out().includes("kettle is on"), "the cron answer in the chat", 20_000);
    expect(chat.out()).toMatch(/\n\[cron\] agent> Simulated reply .*Tell ann the kettle is on/);

    expect(await gw.kill("SIGTERM")).toBe(0);
    await until(() => chat.out().includes("(lost the gateway"), "the chat to notice", 20_000);
    await runJob("tea", "Tell ann the tea is ready");
    gw = await spawnGateway(["--home", home, "--port", port]);
    await until(() => chat.out().includes("tea is ready"), "the answer that came while away", 25_000);
    await until(() => chat.out().includes("(connected again)"), "the chat to reconnect", 20_000);

    expect(await chat.end()).toBe(0);
    const out = chat.out();
    expect(out).toMatch(/\n\[cron\] agent> Simulated reply .*Tell ann the tea is ready/);
    expect(count(out, "kettle is on")).toBe(1);
    expect(count(out, "tea is ready")).toBe(1);
    expect(count(out, 'you said "hi"')).toBe(1);
    expect(out.indexOf("kettle is on")).toBeLessThan(out.indexOf("tea is ready"));
    expect(await gw.kill("SIGTERM")).toBe(0);
  }, 120_000);

  it("a new chat first prints what arrived while no chat was open, and nothing it showed before", async () => {
    gw = await spawnGateway(["--home", home, "--port", "0"]);
    const first = startCli(["chat", "--url", gw.url, "--home", home, "--sender", "bea"]);
    await until(() => first.out().includes("Ctrl-D to quit"), "the first chat to connect", 20_000);
    first.type("hello\n");
    await until(() => first.out().includes("agent> Simulated reply"), "the answer to hello", 20_000);
    await runJob("lamp", "Tell bea the lamp is on");
    await until(() => first.out().includes("lamp is on"), "the cron answer in the first chat", 20_000);
    expect(await first.end()).toBe(0);

    // No chat open: the answer waits in bea's mailbox.
    await runJob("bread", "Tell bea the bread is baked");
    const url = gw.url;
    await until(
      async () => {
        const r = await fetch(`${url}/v1/console/replies?sender=bea&after=0`);
        const body = (await r.json()) as { replies: Array<{ text: string }> };
        return body.replies.some((x) => x.text.includes("bread is baked"));
      },
      "the answer in the mailbox",
      25_000,
    );

    const second = startCli(["chat", "--url", gw.url, "--home", home, "--sender", "bea"]);
    await until(() => second.out().includes("bread is baked"), "the missed answer in the new chat", 20_000);
    expect(await second.end()).toBe(0);
    const out = second.out();
    expect(out.indexOf("Ctrl-D to quit")).toBeLessThan(out.indexOf("bread is baked"));
    expect(out).toMatch(/\n\[cron\] agent> Simulated reply .*Tell bea the bread is baked/);
    expect(count(out, "bread is baked")).toBe(1);
    expect(out).not.toContain("lamp is on");
    expect(out).not.toContain('you said "hello"');
    expect(await gw.kill("SIGTERM")).toBe(0);
  }, 120_000);
});
