/**
 * Start-up recovery and store failures, in-process against the simulator: what a crash left
 * half done (a tool call without result, a message committed but never routed) is finished
 * correctly, and a store that fails for a while loses nothing and answers nothing twice.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/channels/types.js";
import { INTERRUPTED_TOOL_RESULT } from "../../src/harness/transcript.js";
import { openSqliteStore } from "../../src/store/sqlite/open-sqlite-store.js";
import type { Store } from "../../src/store/types.js";
import { StoreError } from "../../src/store/store-error.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { FakeTelegramBotApi } from "../fakes/telegram-bot-api.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";
import { until } from "../helpers/until.js";

let sim: ModelSimulator;
let home: string;
let gw: TestGateway | undefined;

beforeEach(async () => {
  sim = new ModelSimulator();
  await sim.start();
  home = mkdtempSync(join(tmpdir(), "sy-recovery-"));
});
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  await sim.close();
  rmSync(home, { recursive: true, force: true });
});

function httpMessage(sender: string, text: string, id: string): InboundMessage {
  return {
    channel: "http",
    accountId: "default",
    chatId: sender,
    senderId: sender,
    senderName: sender,
    isDirect: true,
    mentionsBot: true,
    text,
    attachments: [],
    platformMessageId: id,
    receivedAt: Date.now(),
  };
}

/** Opens the gateway's database in `home` as a crashed process would have left it. */
function crashedStore(): Store {
  return openSqliteStore({ path: join(home, "switchyard.db") });
}

describe("start-up recovery", () => {
  it("repairs a tool call a crash left without result before calling the model again", async () => {
    const store = crashedStore();
    const sessionKey = "agent:main:http:dm:ann";
    const { record } = await store.inbox.receive(httpMessage("ann", "read my notes", "m1"), sessionKey, 1);
    await store.inbox.markQueued(record.id, 1);
    await store.sessions.ensure(sessionKey, "ses-1", null, 1);
    // The crashed process held the session's lease (long expired by the time the gateway starts).
    const lease = await store.leases.acquireSession(sessionKey, "gw_crashed", 2, 1_000);
    if (!lease) throw new Error("the session lease was refused");
    await store.inbox.claim(sessionKey, "ses-1", "run-crashed", { all: false, lease }, 2);
    await store.transcript.append(
      sessionKey,
      "ses-1",
      "run-crashed",
      [
        {
          type: "assistant",
          text: "Let me look.",
          toolCalls: [{ id: "toolu_1", name: "read_file", argumentsJson: '{"path":"MEMORY.md"}' }],
        },
      ],
      3,
      lease,
    );
    store.close(); // the process died here: the message is `running`, the call has no result

    sim.script({ text: "Your notes are empty." });
    gw = await startTestGateway(simulatorConfig(sim, "anthropic"), { home });
    const [request] = await sim.waitForRequests(1, 10_000);
    const body = request?.body as { messages: Array<{ role: string; content: unknown }> } | undefined;
    const messages = body?.messages ?? [];
    const blocks = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    expect(blocks).toContainEqual(
      expect.objectContaining({
        type: "tool_result",
        tool_use_id: "toolu_1",
        content: INTERRUPTED_TOOL_RESULT,
      }),
    );
    // The user's message is in the history once, not once per attempt.
    // (The newest one carries the turn's <context> block before the person's words.)
    const userTexts = blocks.filter((b) => b.type === "text" && b.text?.endsWith("read my notes"));
    expect(userTexts).toHaveLength(1);
    await until(
      async () => (await gw?.running.store.inbox.get(record.id))?.state === "answered",
      "the message to be answered",
    );
    expect((await gw.running.store.outbox.listForInbox(record.id)).map((r) => r.text)).toEqual([
      "Your notes are empty.",
    ]);
  });

  it("routes a message a crash left `received` (committed, never routed), once", async () => {
    const store = crashedStore();
    const { record } = await store.inbox.receive(
      httpMessage("bea", "are you there?", "m2"),
      "agent:main:http:dm:bea",
      1,
    );
    store.close();
    sim.script({ text: "Yes." });
    gw = await startTestGateway(simulatorConfig(sim, "anthropic"), { home });
    await until(
      async () => (await gw?.running.store.inbox.get(record.id))?.state === "answered",
      "the recovered message to be answered",
    );
    expect(sim.requests).toHaveLength(1);
    // A redelivery by the client is recognised, never run again.
    const again = await gw.chat("bea", "are you there?", "m2");
    expect(again.body.replies?.map((r) => r.text)).toEqual(["Yes."]);
    expect(sim.requests).toHaveLength(1);
  });

  it("puts a recovered message from an unknown Telegram sender through access control: a code, no run", async () => {
    const tg = new FakeTelegramBotApi();
    await tg.start();
    const token = "777:AArecovery-token-for-the-fake-bot-api-0";
    tg.addBot({ token, id: 777, username: "recovery_bot" });
    try {
      const store = crashedStore();
      await store.inbox.receive(
        {
          channel: "telegram",
          accountId: "default",
          chatId: "99",
          senderId: "99",
          senderName: "Stranger",
          isDirect: true,
          mentionsBot: true,
          text: "let me in",
          attachments: [],
          platformMessageId: "99:1",
          receivedAt: 1,
        },
        "agent:main:telegram:dm:99",
        1,
      );
      store.close();
      gw = await startTestGateway(
        { ...simulatorConfig(sim, "anthropic"), channels: { telegram: { token, apiRoot: tg.apiRoot } } },
        { home },
      );
      await until(() => tg.sentMessages({ chatId: 99 }).length > 0, "the pairing code");
      expect(tg.sentMessages({ chatId: 99 })[0]?.text).toMatch(/pairing code is [A-Z2-9]{8}/);
      expect(sim.requests).toHaveLength(0);
    } finally {
      await gw?.stop();
      gw = undefined;
      await tg.close();
    }
  });
});

describe("a reply chunk caught mid-send by a crash", () => {
  it("is sent again after restart, and counted as a possible repeat", async () => {
    const tg = new FakeTelegramBotApi();
    await tg.start();
    const token = "778:AAresend-token-for-the-fake-bot-api-000";
    tg.addBot({ token, id: 778, username: "resend_bot" });
    try {
      const store = crashedStore();
      const message = { ...httpMessage("42", "hi", "42:7"), channel: "telegram" as const, chatId: "42" };
      const now = Date.now(); // recent: older replies would be expired, not sent late
      const { record } = await store.inbox.receive(message, "agent:main:telegram:dm:42", now);
      const target = { channel: "telegram" as const, accountId: "default", chatId: "42" };
      await store.rejectWithReply(
        record.id,
        "command /help",
        [{ target, text: "the help text", seq: 0, kind: "notice" }],
        now + 1,
      );
      // The crash: the row was claimed (sending) and the process died before markSent.
      expect(await store.outbox.claimDue(now + 2, 10)).toHaveLength(1);
      await store.close();

      gw = await startTestGateway(
        {
          ...simulatorConfig(sim, "anthropic"),
          channels: { telegram: { token, apiRoot: tg.apiRoot, dmPolicy: "open" } },
        },
        { home },
      );
      await until(() => tg.sentMessages({ chatId: 42 }).length > 0, "the resent chunk");
      expect(tg.sentMessages({ chatId: 42 }).map((m) => m.text)).toEqual(["the help text"]);
      const metrics = await (await fetch(`${gw.url}/metrics`)).text();
      expect(metrics).toContain('switchyard_outbox_resent_total{channel="telegram"} 1');
    } finally {
      await gw?.stop();
      gw = undefined;
      await tg.close();
    }
  });
});

describe("a failing store", () => {
  it("routes a message whose first routing failed when the client sends it again", async () => {
    // A command is committed `received`, then routed; the routing step fails once.
    let failRouting = 1;
    gw = await startTestGateway(simulatorConfig(sim, "anthropic"), {
      home,
      wrapStore: (store) => {
        const rejectWithReply = store.rejectWithReply.bind(store);
        store.rejectWithReply = async (...args) => {
          if (failRouting-- > 0) throw new StoreError("locked", "database is locked (injected)");
          return rejectWithReply(...args);
        };
        return store;
      },
    });
    const first = await gw.chat("cy", "/help", "m3");
    expect(first.status).toBe(503); // nothing lost: the client sends it again
    const second = await gw.chat("cy", "/help", "m3");
    expect(second.body.replies?.[0]?.text).toMatch(/^Commands:/);
    // The home is fresh: the command is inbox row 1, answered once.
    expect(await gw.running.store.inbox.get(1)).toMatchObject({ state: "rejected", error: "command /help" });
    expect(await gw.running.store.outbox.listForInbox(1)).toHaveLength(1);
    expect(sim.requests).toHaveLength(0);
  });

  it("keeps a finished turn until the store accepts it, and answers once", async () => {
    let failCommits = 2;
    gw = await startTestGateway(simulatorConfig(sim, "anthropic"), {
      home,
      wrapStore: (store) => {
        const commitTurn = store.commitTurn.bind(store);
        store.commitTurn = async (turn, now) => {
          if (failCommits-- > 0) throw new StoreError("disk_full", "the disk is full (injected)");
          return commitTurn(turn, now);
        };
        return store;
      },
    });
    sim.script({ text: "Saved at last." });
    const res = await gw.chat("dee", "hi", "m4");
    expect(res.body.replies?.map((r) => r.text)).toEqual(["Saved at last."]);
    expect(failCommits).toBe(-1);
    expect(sim.requests).toHaveLength(1);
  });
});

describe("graceful shutdown", () => {
  it("aborts a turn still running when the drain times out, and redoes it after restart", async () => {
    const config = { ...simulatorConfig(sim, "anthropic"), gateway: { drainTimeoutMs: 200 } };
    gw = await startTestGateway(config, { home });
    sim.script({ hang: true });
    const pending = gw.chat("eve", "a slow question", "m5").catch((err: unknown) => err);
    await sim.waitForRequests(1, 10_000);
    await gw.stop(); // drains for 200 ms, then aborts the hanging turn without committing it
    gw = undefined;
    await pending;

    const store = crashedStore();
    const [row] = (await store.inbox.listUnfinished()).filter((r) => r.message.text === "a slow question");
    // Not answered: the lease release at shutdown put it back in the queue for whoever runs next.
    expect(row?.state).toBe("queued");
    store.close();

    sim.script({ text: "Here is the slow answer." });
    gw = await startTestGateway(config, { home });
    await until(
      async () => (await gw?.running.store.inbox.get(row?.id ?? -1))?.state === "answered",
      "the interrupted message to be answered after restart",
    );
    expect((await gw.running.store.outbox.listForInbox(row?.id ?? -1)).map((r) => r.text)).toEqual([
      "Here is the slow answer.",
    ]);
  });

  it("does not accept new messages while draining, so the client can send them again", async () => {
    gw = await startTestGateway(simulatorConfig(sim, "anthropic"), { home });
    gw.running.gateway.shutdown(5_000).catch(() => undefined);
    const refused = await gw.chat("fay", "too late", "m6");
    expect(refused.status).toBe(503);
    const store = gw.running.store;
    expect((await store.inbox.listUnfinished()).some((r) => r.message.text === "too late")).toBe(false);
  });
});
