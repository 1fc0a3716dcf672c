/**
 * Test-side helpers for driving the real discord.js client against {@link FakeDiscord}: a
 * per-test fixture (fake started before, clients destroyed and fake closed after), client
 * options as the production adapter sets them (no identify throttling, no REST retries or
 * offset), login awaited to ClientReady, and the next matching messageCreate as a promise.
 */
import { once } from "node:events";
import { Client, type ClientOptions, Events, GatewayIntentBits, type Message, Partials } from "discord.js";
import { afterEach, beforeEach } from "vitest";
import { FakeDiscord, type FakeDiscordOptions } from "./discord-api.js";

/** The adapter's intents: Guilds, GuildMessages, DirectMessages, MessageContent. */
export const ADAPTER_INTENTS: number[] = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.DirectMessages,
  GatewayIntentBits.MessageContent,
];

/** Client options pointing at the fake: its REST root, no 50 ms offset, no retries, no 5 s identify spacing. */
export function fakeClientOptions(fake: FakeDiscord, intents: number[] = ADAPTER_INTENTS): ClientOptions {
  return {
    intents,
    partials: [Partials.Channel],
    rest: { api: fake.apiUrl, offset: 0, retries: 0 },
    ws: { buildIdentifyThrottler: () => ({ waitForIdentify: async () => {} }) },
  };
}

/**
 * Logs in and resolves at ClientReady (every guild received). Await this before `destroy()`:
 * destroying a shard that is still waiting for READY can leave it reconnecting after destroy.
 */
export async function loginReady(client: Client, fake: FakeDiscord): Promise<Client<true>> {
  const isReady = once(client, Events.ClientReady);
  await client.login(fake.token);
  await isReady;
  return client as Client<true>;
}

/** The next messageCreate for which `match` holds. */
export function nextMessage(client: Client, match: (m: Message) => boolean = () => true): Promise<Message> {
  return new Promise((resolve) => {
    const listener = (message: Message) => {
      if (!match(message)) return;
      client.off(Events.MessageCreate, listener);
      resolve(message);
    };
    client.on(Events.MessageCreate, listener);
  });
}

/** Resolves with what `promise` rejects with; fails if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );
}

/** What {@link useFakeDiscord} hands a test file. */
export interface DiscordFixture {
  /** This test's fake (started). */
  readonly fake: FakeDiscord;
  /** A client for `target` (default this test's fake), destroyed after the test. */
  client(target?: FakeDiscord, intents?: number[]): Client;
  /** Logs `client` (default a fresh one) in to ClientReady. */
  ready(client?: Client, target?: FakeDiscord): Promise<Client<true>>;
  /** Runs `cleanup` after the test, before the fake closes (latest first). */
  defer(cleanup: () => Promise<unknown>): void;
}

/** Registers beforeEach/afterEach hooks: a started fake per test; clients destroyed, then the fake closed. */
export function useFakeDiscord(options: FakeDiscordOptions = {}): DiscordFixture {
  let current: FakeDiscord | undefined;
  const cleanups: Array<() => Promise<unknown>> = [];
  beforeEach(async () => {
    current = new FakeDiscord(options);
    await current.start();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await current?.close();
  });
  const fixture: DiscordFixture = {
    get fake() {
      if (!current) throw new Error("useFakeDiscord: no fake outside a test");
      return current;
    },
    client(target = fixture.fake, intents?: number[]) {
      const client = new Client(fakeClientOptions(target, intents));
      cleanups.push(() => client.destroy());
      return client;
    },
    ready(client?: Client, target = fixture.fake) {
      return loginReady(client ?? fixture.client(target), target);
    },
    defer(cleanup) {
      cleanups.push(cleanup);
    },
  };
  return fixture;
}
