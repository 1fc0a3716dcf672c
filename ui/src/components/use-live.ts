/**
 * The admin event stream while a view is open: `GET /v1/admin/events` read with fetch (the
 * Bearer header), reconnected with backoff. Each `overview` / `session` / `log` frame is parsed
 * and handed to `onEvent`; `connected` tells whether it is open now.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { AdminStreamEvent } from "../../../src/admin/contract.js";
import { LiveStream } from "../lib/live-stream.js";
import { useApi } from "./app-context.js";

const EVENTS = new Set(["overview", "session", "log"]);

/** See the file header; `query` (e.g. "logs=1") reopens the stream when it changes. */
export function useLive(query: string, onEvent: (event: AdminStreamEvent) => void): boolean {
  const api = useApi();
  const [connected, setConnected] = useState(false);
  const handler = useRef(onEvent);
  handler.current = onEvent;
  useEffect(() => {
    const stream = new LiveStream({
      api,
      path: () => `/v1/admin/events${query ? `?${query}` : ""}`,
      onFrame: (frame) => {
        if (!EVENTS.has(frame.event)) return;
        let data: unknown;
        try {
          data = JSON.parse(frame.data);
        } catch {
          return;
        }
        handler.current({ event: frame.event, data } as AdminStreamEvent);
      },
      onState: setConnected,
    });
    return () => stream.close();
  }, [api, query]);
  return connected;
}
