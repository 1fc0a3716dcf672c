/**
 * The page's routes, kept in the address's fragment (`#/sessions/<key>`): parsed into a tagged
 * union, and written back by {@link hrefOf}. Anything unknown is the page's own not-found view.
 */

/** One screen of the page. */
export type Route =
  | { view: "overview" }
  | { view: "sessions" }
  | { view: "session"; key: string }
  | { view: "chat" }
  | { view: "scheduled" }
  | { view: "assignments" }
  | { view: "assignment"; id: string }
  | { view: "models" }
  | { view: "access" }
  | { view: "logs" }
  | { view: "not-found"; path: string };

/** The views reached by a fragment with no argument, in the navigation's order. */
export const TOP_VIEWS = [
  "overview",
  "sessions",
  "chat",
  "scheduled",
  "assignments",
  "models",
  "access",
  "logs",
] as const;

/** A view of the navigation. */
export type TopView = (typeof TOP_VIEWS)[number];

const DETAIL: Record<string, "session" | "assignment"> = {
  sessions: "session",
  assignments: "assignment",
};

/**
 * `location.hash` → the route. "", "#" and "#/" are the overview; `#/sessions/<key>` decodes
 * its key (percent-encoded, it may hold "/" or ":"); a trailing "/" is ignored.
 */
export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, "").replace(/^\/+/, "").replace(/\/+$/, "");
  if (path === "") return { view: "overview" };
  const slash = path.indexOf("/");
  const head = slash < 0 ? path : path.slice(0, slash);
  if (slash < 0) {
    return (TOP_VIEWS as readonly string[]).includes(head)
      ? ({ view: head } as Route)
      : { view: "not-found", path: `/${path}` };
  }
  const detail = DETAIL[head];
  const rest = path.slice(slash + 1);
  if (!detail || rest === "") return { view: "not-found", path: `/${path}` };
  let arg: string;
  try {
    arg = decodeURIComponent(rest);
  } catch {
    return { view: "not-found", path: `/${path}` };
  }
  return detail === "session" ? { view: "session", key: arg } : { view: "assignment", id: arg };
}

/** The fragment of a route ("#/sessions/telegram%3A42"). */
export function hrefOf(route: Route): string {
  switch (route.view) {
    case "session":
      return `#/sessions/${encodeURIComponent(route.key)}`;
    case "assignment":
      return `#/assignments/${encodeURIComponent(route.id)}`;
    case "not-found":
      return `#${route.path}`;
    default:
      return `#/${route.view}`;
  }
}

/** The navigation entry a route belongs under (a session's page under Sessions). */
export function sectionOf(route: Route): TopView | undefined {
  if (route.view === "session") return "sessions";
  if (route.view === "assignment") return "assignments";
  if (route.view === "not-found") return undefined;
  return route.view;
}
