/**
 * The HTTP and console channel modules: the same adapter (HttpChannel) on two paths of the
 * gateway's server. Both are the owner's own (loopback by default, or behind
 * `gateway.auth.token`), and declare so: their access policy admits everyone.
 */
import { z } from "zod";
import { section } from "../../util/zod-sections.js";
import { allowAll } from "../access-policy.js";
import type { ChannelModule } from "../types.js";
import { HttpChannel } from "./http-channel.js";

const settings = section({ enabled: z.boolean().default(true) });

/** `POST /v1/chat`, the OpenAI-compatible `/v1/chat/completions` and `/v1/models` (on by default). */
export const httpModule: ChannelModule<typeof settings> = {
  settings,
  enabled: (s) => s.enabled,
  create: (_s, ctx) => ({
    channels: [
      new HttpChannel({
        name: "http",
        server: ctx.server,
        answers: ctx.answers,
        basePath: "/v1/chat",
        openaiCompatible: true,
        modelId: `switchyard:${ctx.agentId}`,
      }),
    ],
    access: allowAll,
  }),
  probe: async (_s, { baseUrl }) => [
    {
      verdict: "ok",
      what: "http",
      detail: `listens at ${baseUrl}/v1/chat (and the OpenAI-compatible ${baseUrl}/v1/chat/completions)`,
    },
  ],
};

/** `POST /v1/console`, where `switchyard chat` talks (on by default). */
export const consoleModule: ChannelModule<typeof settings> = {
  settings,
  enabled: (s) => s.enabled,
  create: (_s, ctx) => ({
    channels: [
      new HttpChannel({
        name: "console",
        server: ctx.server,
        answers: ctx.answers,
        basePath: "/v1/console",
        openaiCompatible: false,
      }),
    ],
    access: allowAll,
  }),
  probe: async (_s, { baseUrl }) => [
    { verdict: "ok", what: "console", detail: `listens at ${baseUrl}/v1/console (use switchyard chat)` },
  ],
};
