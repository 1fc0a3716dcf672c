/**
 * The Store contract on PostgreSQL: a throwaway cluster (test/helpers/postgres.ts), each test on
 * a fresh schema of one database, and a second handle (another pool: a second gateway process)
 * on the same schema for the ownership cases. One part alone: `-t "postgres > inbox"`.
 */
import { afterAll, beforeAll } from "vitest";
import { openPgStore } from "../../src/store/postgres/open-pg-store.js";
import type { Store } from "../../src/store/types.js";
import { runStoreContract } from "../contract/store-contract.js";
import { type TestPostgres, startPostgres } from "../helpers/postgres.js";

let server: TestPostgres;
let url = "";
let schemaSeq = 0;
const schemas = new WeakMap<Store, string>();

beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase("contract");
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

runStoreContract(
  "postgres",
  async () => {
    const schema = `c${++schemaSeq}`;
    const store = await openPgStore({ url, schema, poolSize: 4 });
    schemas.set(store, schema);
    return store;
  },
  {
    openPeer: (first) => {
      const schema = schemas.get(first);
      if (!schema) throw new Error("openPeer: not a store this suite opened");
      return openPgStore({ url, schema, poolSize: 4 });
    },
  },
);
