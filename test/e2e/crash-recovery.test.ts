/**
 * Crash safety: the gateway process is SIGKILLed at several points — mid-stream, during start-up
 * recovery, between a tool call and the next model call, and during shutdown — then restarted.
 * Clients resend what they never got an answer for (as a platform redelivers), and every
 * accepted message must be answered exactly once.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type GatewayProcess, spawnGateway } from "../helpers/gateway-process.js";
import { postChat } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

interface Msg {
  id: string;
  sender: string;
  text: string;
}

describe("crash recovery (SIGKILL)", () => {
  let sim: ModelSimulator;
  let home: string;
  let configPath: string;
  beforeAll(async () => {
    // Slow streams so a kill lands in the middle of a run.
    sim = new ModelSimulator({ chunkDelayMs: 15, chunkChars: 4 });
    await sim.start();
    home = mkdtempSync(join(tmpdir(), "sy-crash-"));
    configPath = join(home, "switchyard.yaml");
    writeFileSync(
      configPath,
      [
        "agent:",
        "  model: anthropic/claude-test",
        "providers:",
        "  anthropic:",
        "    apiKey: sk-ant-test-key",
        `    baseUrl: ${sim.url}`,
        "lanes:",
        "  maxConcurrent: 2",
        "logging:",
        "  level: warn",
      ].join("\n"),
    );
  });
  afterAll(async () => {
    await sim.close();
    rmSync(home, { recursive: true, force: true });
  });

  const start = () => spawnGateway(["--home", home, "--config", configPath, "--port", "0"]);

  /** Sends without waiting; a killed gateway just drops the connection. */
  const fire = (gw: GatewayProcess, msgs: Msg[]) => {
    for (const m of msgs) void postChat(gw.url, m.sender, m.text, m.id).catch(() => undefined);
  };

  it("answers every accepted message exactly once across repeated kills", async () => {
    const msgs: Msg[] = [];
    for (const sender of ["ann", "bob", "cy"]) {
      for (let n = 1; n <= 4; n++)
        msgs.push({ id: `${sender}-${n}`, sender, text: `marker-${sender}-${n} please answer` });
    }

    // 1. Kill mid-stream. The first reply holds after its first frame (the next one is a minute
    // away), so a kill any time after its request arrived finds that run inside its model call,
    // its stream open and nothing committed: a state the test observes, not a moment it guesses.
    sim.script({ text: "a reply the kill interrupts", chunkDelayMs: 60_000 });
    let gw = await start();
    let seen = sim.requests.length;
    fire(gw, msgs);
    await until(() => sim.requests.length > seen, "the first model request", 15_000);
    await gw.kill();

    // 2. Kill during start-up recovery: right after it reports ready, while recovered runs start.
    gw = await start();
    seen = sim.requests.length;
    await until(() => sim.requests.length > seen, "a recovered run's model request", 15_000);
    await gw.kill();

    // 3. Kill after some answers were committed and delivered.
    gw = await start();
    fire(gw, msgs);
    const mailboxCount = async () => {
      let total = 0;
      for (const sender of ["ann", "bob", "cy"]) {
        const res = await fetch(`${gw.url}/v1/chat/replies?sender=${sender}`).catch(() => undefined);
        total += res ? ((await res.json()) as { replies: unknown[] }).replies.length : 0;
      }
      return total;
    };
    await until(async () => (await mailboxCount()) >= 3, "three delivered answers", 15_000);
    await gw.kill();

    // 4. Final run: resend everything; all answers arrive.
    gw = await start();
    const answers = await Promise.all(msgs.map((m) => postChat(gw.url, m.sender, m.text, m.id)));
    for (const [i, a] of answers.entries()) {
      expect(a.status).toBe(200);
      expect(a.body.state).toBe("answered");
      expect(a.body.replies?.[0]?.text).toContain(`marker-${msgs[i]?.sender}-${(i % 4) + 1}`);
    }

    // Exactly one delivered reply per message.
    for (const sender of ["ann", "bob", "cy"]) {
      const res = await fetch(`${gw.url}/v1/chat/replies?sender=${sender}`);
      const { replies } = (await res.json()) as { replies: Array<{ text: string }> };
      for (let n = 1; n <= 4; n++) {
        const hits = replies.filter((r) => r.text.includes(`marker-${sender}-${n} `));
        expect(hits, `replies for ${sender}-${n}`).toHaveLength(1);
      }
      expect(replies).toHaveLength(4);
    }
    const status = (await (await fetch(`${gw.url}/v1/status`)).json()) as {
      inbox: Record<string, number>;
      outbox: Record<string, number>;
    };
    expect(status.inbox.answered).toBe(12);
    expect(status.inbox.failed).toBe(0);
    expect(status.outbox.sent).toBe(12);
    expect(status.outbox.dead).toBe(0);
    await gw.kill("SIGTERM");
  }, 120_000);

  it("resumes a run killed between a tool call and the next model call", async () => {
    sim.clearScript();
    let gw = await start();
    sim.script(
      { toolCalls: [{ name: "write_file", args: { path: "crash.txt", content: "written once" } }] },
      { hang: true },
    );
    const seen = sim.requests.length;
    fire(gw, [{ id: "tool-1", sender: "tina", text: "write the file" }]);
    // The tool call answered, its result appended, the second call hanging.
    await until(() => sim.requests.length >= seen + 2, "the call after the tool", 15_000);
    await gw.kill();

    sim.script({ text: "The file is written." });
    gw = await start();
    const answer = await postChat(gw.url, "tina", "write the file", "tool-1");
    expect(answer.body.replies?.[0]?.text).toBe("The file is written.");
    // The resumed request carried the tool result from before the crash: the tool did not run twice.
    const last = sim.requests[sim.requests.length - 1];
    expect(JSON.stringify(last?.body)).toContain("crash.txt");
    const toolUses = JSON.stringify(last?.body).match(/"tool_use"/g) ?? [];
    expect(toolUses).toHaveLength(1);
    await gw.kill("SIGTERM");
  }, 60_000);

  it("drains on SIGTERM: a running turn finishes and is delivered", async () => {
    sim.clearScript();
    const gw = await start();
    sim.script({ text: "finished while draining", chunkDelayMs: 50 });
    const seen = sim.requests.length;
    const pending = postChat(gw.url, "dan", "slow one", "drain-1");
    await until(() => sim.requests.length > seen, "the model request", 15_000);
    const code = await gw.kill("SIGTERM");
    expect(code).toBe(0);
    const answer = await pending;
    expect(answer.body.replies?.[0]?.text).toBe("finished while draining");
  }, 60_000);
});
