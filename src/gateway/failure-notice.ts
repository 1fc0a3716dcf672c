/**
 * The one line a person sees in the chat when their message could not be answered.
 */
import { ProviderError } from "../harness/providers/provider-error.js";
import { ToolLimitError } from "../harness/run.js";
import { ToolLoopError } from "../harness/tool-loop.js";
import { LaneAbortedError } from "./lanes/errors.js";

/** How one model of a failed chain failed, after its name: "anthropic/claude-x rate-limited". */
const TRIED_PHRASE: Record<ProviderError["kind"], string> = {
  rate_limit: "rate-limited",
  overloaded: "overloaded",
  auth: "rejected the API key",
  billing: "out of credit or quota",
  timeout: "did not answer in time",
  context_overflow: "found the conversation too long",
  invalid_request: "rejected the request",
  network: "could not be reached",
  aborted: "aborted",
  budget: "stopped by a spend cap",
  unknown: "failed",
};

/**
 * A short, plain-words reason for a failed turn; when the model router tried several models,
 * each is named with how it failed.
 */
export function failureNotice(error: unknown, progressTimeoutMs: number): { text: string; kind: string } {
  if (error instanceof LaneAbortedError) {
    if (error.reason === "user_stop") return { text: "⏹ Stopped.", kind: "user_stop" };
    if (error.reason === "progress_timeout") {
      return {
        text: `⚠️ Sorry, I couldn't answer: the turn made no progress for ${Math.round(progressTimeoutMs / 1000)} s and was stopped.`,
        kind: "progress_timeout",
      };
    }
    return {
      text: `⚠️ Sorry, I couldn't answer: the turn was aborted (${error.reason}).`,
      kind: error.reason,
    };
  }
  if (error instanceof ProviderError && error.tried && error.tried.length > 1) {
    const each = error.tried.map((t) => `${t.ref} ${t.kinds.map((k) => TRIED_PHRASE[k]).join(", ")}`);
    return { text: `⚠️ Sorry, I couldn't answer: no model answered (${each.join("; ")}).`, kind: error.kind };
  }
  if (error instanceof ProviderError) {
    const provider = error.provider ?? "the model provider";
    const reasons: Record<ProviderError["kind"], string> = {
      rate_limit: `${provider} is rate-limiting requests; please try again in a minute`,
      overloaded: `${provider} is overloaded right now; please try again shortly`,
      auth: `${provider} rejected the API key (check providers.${error.provider ?? "<provider>"}.apiKey)`,
      billing: `the ${provider} account is out of credit or quota`,
      timeout: `${provider} did not answer in time`,
      context_overflow: "this conversation is too long for the model; send /new to start a fresh session",
      invalid_request: `${provider} rejected the request (${truncate(error.message, 120)})`,
      network: `could not reach ${provider}`,
      aborted: "the turn was aborted",
      budget: error.message,
      unknown: `${provider} failed (${truncate(error.message, 120)})`,
    };
    return { text: `⚠️ Sorry, I couldn't answer: ${reasons[error.kind]}.`, kind: error.kind };
  }
  if (error instanceof ToolLoopError) {
    return {
      text: `⚠️ I stopped: I was going round in circles (${truncate(error.message, 160)}). Ask again, perhaps another way.`,
      kind: error.kind,
    };
  }
  if (error instanceof ToolLimitError) {
    return {
      text: `⚠️ Sorry, I couldn't answer: I kept reaching for tools after the limit of ${error.limit} tool calls for one turn. Ask again, perhaps in smaller steps.`,
      kind: error.kind,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    text: `⚠️ Sorry, I couldn't answer: internal error (${truncate(message, 120)}).`,
    kind: "internal",
  };
}

function truncate(text: string, max: number): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
