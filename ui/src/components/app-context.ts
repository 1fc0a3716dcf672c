/** What every view reaches without props: the API client. */
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { AdminApi } from "../lib/api.js";

/** The page's API client (provided once, by the App). */
export const ApiContext = createContext<AdminApi | undefined>(undefined);

/** The API client; throws when used outside the App (a programming error). */
export function useApi(): AdminApi {
  const api = useContext(ApiContext);
  if (!api) throw new Error("useApi outside the App");
  return api;
}
