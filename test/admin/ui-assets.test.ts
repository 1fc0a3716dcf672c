/**
 * The control page's files at `/ui/` on a real gateway: the page for every route of its own,
 * hashed assets cached for a year and gzip-encoded, the security headers on every answer, a
 * clear 503 when the page is not built, no file outside the page, and loopback-only without a
 * token (the rule itself; a test's client is always on loopback).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLoopbackAddress as isLoopback } from "../../src/util/loopback.js";
import { UI_SECURITY_HEADERS } from "../../src/admin/ui-assets.js";
import { controlPageUrl } from "../../src/cli/ui.js";
import { ModelSimulator } from "../fakes/model-simulator.js";
import { type TestGateway, simulatorConfig, startTestGateway } from "../helpers/test-gateway.js";

const INDEX =
  '<!doctype html><html><head><script type="module" src="/ui/assets/main-ABC123.js"></script></head></html>';
const SCRIPT = `console.log(${JSON.stringify("x".repeat(4_000))});`;

describe("the control page's files", () => {
  let sim: ModelSimulator;
  let gw: TestGateway;
  let unbuilt: TestGateway;

  beforeAll(async () => {
    const ui = mkdtempSync(join(tmpdir(), "sy-ui-"));
    mkdirSync(join(ui, "assets"));
    writeFileSync(join(ui, "index.html"), INDEX);
    writeFileSync(join(ui, "assets", "main-ABC123.js"), SCRIPT);
    writeFileSync(join(tmpdir(), "sy-secret.txt"), "secret");
    sim = new ModelSimulator();
    await sim.start();
    gw = await startTestGateway(simulatorConfig(sim, "openai"), { uiDir: ui });
    unbuilt = await startTestGateway(simulatorConfig(sim, "openai"), { uiDir: join(ui, "missing") });
  });
  afterAll(async () => {
    await gw?.stop();
    await unbuilt?.stop();
    await sim?.close();
  });

  it("serves the page at /ui/ and for its own routes, never cached, with the security headers", async () => {
    for (const path of ["/ui/", "/ui/sessions", "/ui/anything/deeper"]) {
      const res = await fetch(`${gw.url}${path}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(INDEX);
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      for (const [name, value] of Object.entries(UI_SECURITY_HEADERS))
        expect(res.headers.get(name)).toBe(value);
    }
    expect(UI_SECURITY_HEADERS["content-security-policy"]).toContain("script-src 'self';");
    const bare = await fetch(`${gw.url}/ui`, { redirect: "manual" });
    expect([bare.status, bare.headers.get("location")]).toEqual([308, "/ui/"]);
  });

  it("serves hashed assets cached for a year, gzip-encoded when asked", async () => {
    const res = await fetch(`${gw.url}/ui/assets/main-ABC123.js`);
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(await res.text()).toBe(SCRIPT); // fetch decodes it
    // The bytes on the wire are the gzip form, far smaller.
    const raw = await new Promise<Buffer>((resolve, reject) => {
      import("node:http")
        .then(({ get }) =>
          get(`${gw.url}/ui/assets/main-ABC123.js`, { headers: { "accept-encoding": "gzip" } }, (r) => {
            const chunks: Buffer[] = [];
            r.on("data", (c: Buffer) => chunks.push(c));
            r.on("end", () => resolve(Buffer.concat(chunks)));
          }).on("error", reject),
        )
        .catch(reject);
    });
    expect(raw.length).toBeLessThan(SCRIPT.length / 10);
    expect(gunzipSync(raw).toString()).toBe(SCRIPT);
  });

  it("answers a missing asset 404 and nothing outside the page's folder", async () => {
    const missing = await fetch(`${gw.url}/ui/assets/main-OLD.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-security-policy")).toBe(
      UI_SECURITY_HEADERS["content-security-policy"],
    );
    for (const path of [
      "/ui/..%2fsy-secret.txt",
      "/ui/%2e%2e/sy-secret.txt",
      "/ui/assets/..%2f..%2fsy-secret.txt",
    ]) {
      const res = await fetch(`${gw.url}${path}`);
      expect([res.status, await res.text()]).not.toContain("secret");
    }
  });

  it("says how to build the page when dist/ui is missing", async () => {
    const res = await fetch(`${unbuilt.url}/ui/`);
    expect(res.status).toBe(503);
    expect(await res.text()).toBe(
      "The control page is not built: run `npm run build` (it writes dist/ui), then reload.\n",
    );
  });
});

describe("the page's address and who may open it", () => {
  it("switchyard ui puts the token in the fragment, which no request carries", () => {
    expect(controlPageUrl({ url: "http://127.0.0.1:7420", token: undefined })).toBe(
      "http://127.0.0.1:7420/ui/",
    );
    expect(controlPageUrl({ url: "http://127.0.0.1:7420", token: "a b/c" })).toBe(
      "http://127.0.0.1:7420/ui/#token=a%20b%2Fc",
    );
  });

  it("without a token only loopback clients are answered", () => {
    for (const a of ["127.0.0.1", "127.3.2.1", "::1", "::ffff:127.0.0.1"]) expect(isLoopback(a)).toBe(true);
    for (const a of ["10.0.0.2", "::ffff:192.168.1.4", "fe80::1", "", undefined])
      expect(isLoopback(a)).toBe(false);
  });
});
