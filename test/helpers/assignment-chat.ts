/**
 * A gateway on the fake Telegram Bot API and the model simulator, on a ManualClock, with Ann and
 * Bob allowed to write: what the assignment tests drive (`/task`, replies, what each got).
 */
import type { ManualClock } from "../../src/util/clock.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { FakeTelegramBotApi } from "../fakes/telegram-bot-api.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "./test-gateway.js";

const TOKEN = "123456:AAtest-token-for-the-fake-bot-api-000";
const BOT = { token: TOKEN, id: 123456, username: "switchyard_bot", firstName: "Switchyard" };
export const ANN = { id: 42, first_name: "Ann" };
export const BOB = { id: 43, first_name: "Bob" };

/** One test's gateway, fakes and the ways to talk as Ann. */
export class AssignmentChat {
  sim: ModelSimulator | undefined;
  tg: FakeTelegramBotApi | undefined;
  gw: TestGateway | undefined;

  /** Starts (or, with `home`, restarts on the same home and fakes) the gateway. */
  async start(clock: ManualClock, extra: Record<string, unknown> = {}, home?: string): Promise<TestGateway> {
    if (!this.sim) {
      this.sim = new ModelSimulator();
      await this.sim.start();
    }
    if (!this.tg) {
      this.tg = new FakeTelegramBotApi({ now: () => clock.now() });
      await this.tg.start();
      this.tg.addBot(BOT);
    }
    this.gw = await startTestGateway(
      {
        ...simulatorConfig(this.sim, "anthropic"),
        channels: { telegram: { token: TOKEN, apiRoot: this.tg.apiRoot, allowFrom: [ANN.id, BOB.id] } },
        heartbeat: { everyMs: 0 },
        ...extra,
      },
      { clock, ...(home ? { home } : {}) },
    );
    return this.gw;
  }

  /** Ann (or `who`) writes in her private chat. */
  say(text: string, who = ANN): void {
    this.tg?.pushMessage(TOKEN, { chat: { id: who.id, type: "private" }, from: who, text });
  }

  /** What Ann (or `who`) got in her private chat, in order. */
  texts(who = ANN): string[] {
    return this.tg?.sentMessages({ chatId: who.id }).map((m) => m.text ?? "") ?? [];
  }

  async close(): Promise<void> {
    await this.gw?.stop();
    await this.tg?.close();
    await this.sim?.close();
  }
}

/** A scripted tool call. */
export const call = (name: string, args: unknown) => ({ name, args });
/** work_item_update to done. */
export const done = (id: number) => call("work_item_update", { id, status: "done" });
