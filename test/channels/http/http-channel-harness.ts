/**
 * The HTTP and console channels for the channel contract: both HttpChannel instances on one
 * GatewayHttpServer (port 0), as `startGateway` wires them, with an in-test AnswerSource. The
 * "platform" is the HTTP client: a person writes by POSTing to the channel's path.
 */
import type { ChannelContractOptions, ChannelHarness } from "../../contract/channel-contract.js";
import { readMarkdownChunk } from "../../contract/channel-contract.js";
import { HttpChannel } from "../../../src/channels/http/http-channel.js";
import type { AcceptResult, AnswerSource, InboundSink } from "../../../src/channels/types.js";
import { gatewayErrorStatus } from "../../../src/gateway/error-status.js";
import { GatewayHttpServer } from "../../../src/http/server.js";
import { silentLogger } from "../../../src/util/logger.js";

/** The sender the contract writes as (a valid HTTP sender name). */
const SENDER = "contract-user";

/** An AnswerSource whose every message is answered at once with no replies. */
const instantAnswers: AnswerSource = {
  waitForAnswer: async (inboxId) => ({ inboxId, state: "answered", replies: [] }),
  listReplies: async () => [],
  mailboxEnd: async () => 0,
};

/** What HTTP cannot do, for `runChannelContract`; shared by the http and console runs. */
export const httpContractOptions: ChannelContractOptions = {
  lacks: {
    typing: "an HTTP client has no typing indicator",
    edit: "a reply already returned in an HTTP response cannot be changed",
    rate_limit: "send only issues the outbox receipt, so no platform can rate-limit it",
    permanent: "send only issues the outbox receipt, so no platform can refuse it",
    sent_view:
      "send only issues the receipt; the client reads replies from its response or the gateway's outbox mailbox",
  },
};

/**
 * Starts the server with both channels; `which` is started with `sink` and returned, the other
 * one gets a sink that fails any delivery (a message must reach only the channel it was sent to).
 */
export async function startHttpChannelHarness(
  which: "http" | "console",
  sink: InboundSink,
): Promise<ChannelHarness> {
  const server = new GatewayHttpServer({
    host: "127.0.0.1",
    port: 0,
    logger: silentLogger(),
    errorStatus: gatewayErrorStatus,
  });
  const http = new HttpChannel({
    name: "http",
    server,
    answers: instantAnswers,
    basePath: "/v1/chat",
    openaiCompatible: true,
  });
  const consoleChannel = new HttpChannel({
    name: "console",
    server,
    answers: instantAnswers,
    basePath: "/v1/console",
    openaiCompatible: false,
  });
  const [channel, sibling] = which === "http" ? [http, consoleChannel] : [consoleChannel, http];
  const basePath = which === "http" ? "/v1/chat" : "/v1/console";
  await server.listen();
  await channel.start(sink);
  await sibling.start({
    accept: async (): Promise<AcceptResult> => {
      throw new Error(`a message for the ${which} channel reached the ${sibling.name} channel`);
    },
  });

  let seq = 0;
  return {
    channel,
    platform: {
      chat: { chatId: SENDER, senderId: SENDER },
      async inject(text) {
        const id = `contract-${which}-${++seq}`;
        const res = await fetch(`${server.url}${basePath}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ sender: SENDER, text, id }),
        });
        const body = await res.text();
        // 503 is the stopped channel's answer; anything else unexpected is a harness failure.
        if (res.status !== 200 && res.status !== 503)
          throw new Error(`POST ${basePath} answered ${res.status}: ${body}`);
        return { platformMessageId: id };
      },
      // The response to the POST was the platform's whole exchange: nothing is left pending.
      settle: async () => {},
      read: readMarkdownChunk,
    },
    async close() {
      await channel.stop();
      await sibling.stop();
      await server.close();
    },
  };
}
