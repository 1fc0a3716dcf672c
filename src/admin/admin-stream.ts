/**
 * The control page's live stream (`GET /v1/admin/events`): server-sent events, pushed when
 * something happens, never polled. The overview is sent at once and again after a lane or turn
 * event changed it (computed at most once per `overviewEveryMs` however busy the gateway is, and
 * sent only when its JSON differs from the last one sent); a `session` event names each session
 * whose lane or transcript changed; with `logs=1` each log line follows.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { openSse } from "../channels/http/sse.js";
import type { GatewayEvent } from "../gateway/events.js";
import type { LaneQueueEvent } from "../gateway/lanes/types.js";
import type { LogLine } from "./contract.js";
import { laneState } from "./session-views.js";
import type { AdminApi } from "./admin-api.js";

/** Options of {@link serveAdminStream}. */
export interface AdminStreamOptions {
  /** Shortest time between two overview computations of one stream; default 500 ms. */
  overviewEveryMs?: number;
  /** Keep-alive comment period; default 15 s. */
  keepAliveMs?: number;
}

/** One SSE frame. */
export function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The session a gateway event concerns, if any. */
function sessionOf(e: GatewayEvent): string | undefined {
  return "sessionKey" in e ? e.sessionKey : undefined;
}

/** Serves one stream until the client goes away or the server closes. */
export async function serveAdminStream(
  api: AdminApi,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  options: AdminStreamOptions = {},
): Promise<void> {
  const s = api.sources;
  const everyMs = options.overviewEveryMs ?? 500;
  const sse = openSse(res, options.keepAliveMs ?? 15_000);
  let closed = false;
  let last = "";
  let timer: NodeJS.Timeout | undefined;
  let computing = false;
  let again = false;

  const sendOverview = async (): Promise<void> => {
    if (closed) return;
    if (computing) {
      again = true;
      return;
    }
    computing = true;
    try {
      const json = JSON.stringify(await api.overview());
      if (json !== last && !closed) {
        last = json;
        sse.write(`event: overview\ndata: ${json}\n\n`);
      }
    } catch (err) {
      s.logger.warn({ err }, "admin stream: could not build the overview");
    } finally {
      computing = false;
    }
    if (again) {
      again = false;
      schedule();
    }
  };
  /** At most one overview per `everyMs`: later changes ride on the one already scheduled. */
  const schedule = (): void => {
    if (closed || timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      sendOverview().catch(() => {});
    }, everyMs);
    timer.unref();
  };
  const session = (key: string): void => {
    if (!closed) sse.write(sseFrame("session", { sessionKey: key, state: laneState(s.lanes, key) }));
  };

  const offLanes = s.onLaneEvent((e: LaneQueueEvent) => {
    schedule();
    if (e.type !== "coalesced") session(e.sessionKey);
  });
  const offEvents = s.events.on((e: GatewayEvent) => {
    schedule();
    const key = sessionOf(e);
    if (key !== undefined) session(key);
  });
  const offLogs =
    url.searchParams.get("logs") === "1" && s.logTail
      ? s.logTail.subscribe((line: LogLine) => {
          if (!closed) sse.write(sseFrame("log", line));
        })
      : () => {};

  await new Promise<void>((resolve) => {
    const end = () => {
      if (closed) return;
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      offLanes();
      offEvents();
      offLogs();
      sse.close();
      resolve();
    };
    req.once("close", end);
    res.once("close", end);
    sendOverview().catch(() => {});
  });
}
