/**
 * The page's shell: who is signed in (a 401 anywhere shows only the login form), which route is
 * open (the address's fragment), the navigation, and the view of the route.
 */
import { html } from "htm/preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { ApiContext } from "./components/app-context.js";
import { AdminApi, ApiError } from "./lib/api.js";
import { type Route, TOP_VIEWS, type TopView, hrefOf, parseRoute, sectionOf } from "./lib/route.js";
import { forgetToken, storeToken } from "./lib/token.js";
import { AccessView } from "./views/access-view.js";
import { AssignmentView } from "./views/assignment-view.js";
import { AssignmentsView } from "./views/assignments-view.js";
import { ChatView } from "./views/chat-view.js";
import { LoginView } from "./views/login-view.js";
import { LogsView } from "./views/logs-view.js";
import { ModelsView } from "./views/models-view.js";
import { NotFoundView } from "./views/not-found-view.js";
import { OverviewView } from "./views/overview-view.js";
import { ScheduledView } from "./views/scheduled-view.js";
import { SessionView } from "./views/session-view.js";
import { SessionsView } from "./views/sessions-view.js";

const LABELS: Record<TopView, string> = {
  overview: "Overview",
  sessions: "Sessions",
  chat: "Chat",
  scheduled: "Scheduled",
  assignments: "Assignments",
  models: "Models",
  access: "Access",
  logs: "Logs",
};

type Auth = "checking" | "in" | "login";

/** The whole page; `initialToken` is what {@link captureToken} found on load. */
export function App({ initialToken }: { initialToken: string | undefined }) {
  const token = useRef(initialToken);
  const [auth, setAuth] = useState<Auth>("checking");
  const [refused, setRefused] = useState(false);
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash));
  const api = useMemo(
    () =>
      new AdminApi({
        token: () => token.current,
        onUnauthorized: () => {
          if (token.current !== undefined) setRefused(true);
          token.current = undefined;
          forgetToken(sessionStorage);
          setAuth("login");
        },
      }),
    [],
  );

  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash));
    window.addEventListener("hashchange", onHash);
    // Checked once before anything is shown: a refused token must show the login form only.
    api
      .get("/v1/admin/overview")
      .then(
        () => setAuth("in"),
        (err: unknown) => {
          // A 401 already showed the login form; any other failure is shown by the views.
          if (!(err instanceof ApiError && err.status === 401)) setAuth("in");
        },
      )
      .catch(() => {});
    return () => window.removeEventListener("hashchange", onHash);
  }, [api]);

  const content = useRef<HTMLElement>(null);
  // A new route moves focus to its content, as a page load would (screen readers announce it).
  useEffect(() => content.current?.focus({ preventScroll: true }), [route]);

  const signIn = async (typed: string): Promise<boolean> => {
    token.current = typed;
    storeToken(sessionStorage, typed);
    try {
      await api.get("/v1/admin/overview");
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return false;
      throw err;
    }
    setRefused(false);
    setAuth("in");
    return true;
  };

  if (auth === "checking") return html`<p class="muted splash" aria-busy="true">Connecting…</p>`;
  if (auth === "login") return html`<${LoginView} signIn=${signIn} refused=${refused} />`;
  const section = sectionOf(route);
  return html`<${ApiContext.Provider} value=${api}>
    <a class="skip" href="#content" onClick=${(e: Event) => {
      e.preventDefault();
      content.current?.focus();
    }}>Skip to content</a>
    <header class="top">
      <a class="brand" href="#/overview">Switchyard</a>
      <nav aria-label="Sections">
        <ul>${TOP_VIEWS.map(
          (v) =>
            html`<li><a href=${hrefOf({ view: v } as Route)} aria-current=${section === v ? "page" : undefined}>${LABELS[v]}</a></li>`,
        )}</ul>
      </nav>
    </header>
    <main id="content" ref=${content} tabindex="-1">${viewOf(route)}</main>
  <//>`;
}

/** The view of a route (keyed, so a new session's page starts fresh). */
function viewOf(route: Route) {
  switch (route.view) {
    case "overview":
      return html`<${OverviewView} />`;
    case "sessions":
      return html`<${SessionsView} />`;
    case "session":
      return html`<${SessionView} key=${route.key} sessionKey=${route.key} />`;
    case "chat":
      return html`<${ChatView} />`;
    case "scheduled":
      return html`<${ScheduledView} />`;
    case "assignments":
      return html`<${AssignmentsView} />`;
    case "assignment":
      return html`<${AssignmentView} key=${route.id} id=${route.id} />`;
    case "models":
      return html`<${ModelsView} />`;
    case "access":
      return html`<${AccessView} />`;
    case "logs":
      return html`<${LogsView} />`;
    case "not-found":
      return html`<${NotFoundView} path=${route.path} />`;
  }
}
