/**
 * The admin API's HTTP face: `/v1/admin/…` (contract.ts lists each route) and the control page
 * at `/ui/`. The server checks the bearer token on every `/v1/…` request when
 * `gateway.auth.token` is set; without a token both are answered to loopback clients only (403
 * otherwise), whatever `gateway.host` is. Query and body fields are checked here, each refusal a
 * 400 naming the field.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isLoopbackAddress } from "../util/loopback.js";
import { type GatewayHttpServer, HttpError, readJsonBody, sendJson } from "../http/server.js";
import type { AdminApi } from "./admin-api.js";
import { type AdminStreamOptions, serveAdminStream } from "./admin-stream.js";
import type { UiAssets } from "./ui-assets.js";

/** Options of {@link serveAdmin}. */
export interface AdminRoutesOptions {
  /** True when `gateway.auth.token` is set: the server checks it; otherwise loopback only. */
  tokenRequired: boolean;
  /** The built page; absent: `/ui/` is not served. */
  ui?: UiAssets;
  stream?: AdminStreamOptions;
}

function str(value: unknown, name: string, max = 4_000): string {
  if (typeof value !== "string" || value.trim() === "")
    throw new HttpError(400, `${name}: expected a non-empty string`, "invalid_value", name);
  if (value.length > max)
    throw new HttpError(
      400,
      `${name}: ${value.length} characters is too long (at most ${max})`,
      "invalid_value",
      name,
    );
  return value;
}

function int(value: unknown, name: string, min: number, max: number, fallback?: number): number {
  if ((value === null || value === undefined || value === "") && fallback !== undefined) return fallback;
  const n = typeof value === "string" ? Number(value) : value;
  if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max)
    throw new HttpError(
      400,
      `${name}: expected an integer from ${min} to ${max}, got ${JSON.stringify(value)}`,
      "invalid_value",
      name,
    );
  return n;
}

function oneOf<T extends string>(value: string | null, name: string, allowed: readonly T[], fallback: T): T {
  if (value === null || value === "") return fallback;
  if (!(allowed as readonly string[]).includes(value))
    throw new HttpError(
      400,
      `${name}: expected one of ${allowed.join(", ")}, got "${value}"`,
      "invalid_value",
      name,
    );
  return value as T;
}

/** Registers the admin routes and the page on `server`. */
export function serveAdmin(server: GatewayHttpServer, api: AdminApi, options: AdminRoutesOptions): void {
  const guard = (req: IncomingMessage): void => {
    if (!options.tokenRequired && !isLoopbackAddress(req.socket.remoteAddress))
      throw new HttpError(
        403,
        "the admin API and control page answer only this machine when gateway.auth.token is not set",
        "loopback_only",
      );
  };
  const max = server.maxBodyBytes;
  const get = (path: string, answer: (url: URL) => Promise<unknown> | unknown) =>
    server.route("GET", `/v1/admin/${path}`, async (req, res, url) => {
      guard(req);
      sendJson(res, 200, await answer(url));
    });
  const post = (path: string, answer: (body: Record<string, unknown>) => Promise<unknown>) =>
    server.route("POST", `/v1/admin/${path}`, async (req, res) => {
      guard(req);
      sendJson(res, 200, await answer(await readJsonBody(req, max)));
    });
  const q = (url: URL, name: string) => url.searchParams.get(name);

  get("overview", () => api.overview());
  server.route("GET", "/v1/admin/events", async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    guard(req);
    await serveAdminStream(api, req, res, url, options.stream);
  });
  get("sessions", (url) => api.sessions(int(q(url, "limit"), "limit", 1, 10_000, 200)));
  get("session", (url) =>
    api.session(str(q(url, "key"), "key"), int(q(url, "limit"), "limit", 1, 2_000, 200)),
  );
  post("session/stop", (b) => api.stop(str(b.key, "key")));
  post("session/reset", (b) => api.reset(str(b.key, "key")));
  get("cron", () => api.scheduled());
  get("cron/runs", (url) =>
    api.cronRuns(
      int(q(url, "job"), "job", 1, Number.MAX_SAFE_INTEGER),
      int(q(url, "limit"), "limit", 1, 500, 50),
    ),
  );
  post("cron/run", (b) => api.runNow(int(b.id, "id", 1, Number.MAX_SAFE_INTEGER)));
  post("cron/enable", (b) => {
    if (typeof b.enabled !== "boolean")
      throw new HttpError(400, "enabled: expected true or false", "invalid_value", "enabled");
    return api.enable(int(b.id, "id", 1, Number.MAX_SAFE_INTEGER), b.enabled);
  });
  get("assignments", () => api.assignments());
  get("assignment", (url) => api.assignment(str(q(url, "id"), "id", 200)));
  post("assignment/answer", (b) => api.answer(str(b.id, "id", 200), str(b.text, "text", 8_000)));
  post("assignment/cancel", (b) => api.cancel(str(b.id, "id", 200)));
  get("models", () => api.models());
  get("usage", (url) =>
    api.usage(
      oneOf(q(url, "by"), "by", ["day", "model", "origin"] as const, "day"),
      int(q(url, "days"), "days", 1, 366, 30),
    ),
  );
  post("models/reset", (b) =>
    api.resetProfile(str(b.provider, "provider", 200), str(b.profileId, "profileId", 200)),
  );
  get("access", () => api.access());
  post("access/approve", (b) => api.approve(str(b.channel, "channel", 100), str(b.code, "code", 32)));
  post("access/deny", (b) => api.deny(str(b.channel, "channel", 100), str(b.code, "code", 32)));
  get("logs", (url) =>
    api.logs(
      oneOf(q(url, "level"), "level", ["trace", "debug", "info", "warn", "error", "fatal"] as const, "trace"),
      int(q(url, "limit"), "limit", 1, 1_000, 200),
    ),
  );

  const ui = options.ui;
  if (!ui) return;
  const page = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    guard(req);
    await ui.serve(req, res, url);
  };
  server.route("GET", "/ui", (_req, res) => {
    res.writeHead(308, { location: "/ui/" });
    res.end();
  });
  server.routePrefix("GET", "/ui/", page);
}
