/** The gateway's own routes: health, readiness, Prometheus metrics and status. */
import type { Gateway } from "../gateway/gateway.js";
import type { GatewayMetrics } from "../gateway/metrics.js";
import { type StatusSources, statusSnapshot } from "../gateway/status-snapshot.js";
import { type GatewayHttpServer, sendJson, sendText } from "../http/server.js";

/** Registers `/healthz`, `/readyz`, `/metrics` and `/v1/status`. */
export function serveGatewayRoutes(
  server: GatewayHttpServer,
  deps: { gateway: Pick<Gateway, "ready">; metrics: GatewayMetrics; status: StatusSources },
): void {
  const { gateway, metrics } = deps;
  server.route("GET", "/healthz", (_req, res) => sendJson(res, 200, { ok: true }));
  server.route("GET", "/readyz", (_req, res) =>
    sendJson(res, gateway.ready ? 200 : 503, {
      ready: gateway.ready,
      ...(gateway.ready ? {} : { reason: "recovering or shutting down" }),
    }),
  );
  server.route("GET", "/metrics", (_req, res) =>
    sendText(res, 200, metrics.render(), "text/plain; version=0.0.4"),
  );
  server.route("GET", "/v1/status", async (_req, res) =>
    sendJson(res, 200, await statusSnapshot(deps.status)),
  );
}
