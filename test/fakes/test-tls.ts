/**
 * The test-only key and self-signed certificate in test/fakes/tls/ (see its README): for the
 * HTTPS servers and https:// proxies tests start on 127.0.0.1, and as the CA the transport
 * under test trusts. Never trusted outside test/.
 */
import { readFileSync } from "node:fs";

const dir = new URL("./tls/", import.meta.url);

/** PEM key and certificate; `cert` doubles as the CA that trusts it. */
export const TEST_TLS: { readonly key: string; readonly cert: string } = {
  key: readFileSync(new URL("key.pem", dir), "utf8"),
  cert: readFileSync(new URL("cert.pem", dir), "utf8"),
};

/** A host name the certificate names that no resolver knows: only a proxy can reach it. */
export const TEST_HOST = "api.switchyard.test";
