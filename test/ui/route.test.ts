/** The fragment routes: every view, details with encoded keys, and not-found for the rest. */
import { describe, expect, it } from "vitest";
import { TOP_VIEWS, hrefOf, parseRoute, sectionOf } from "../../ui/src/lib/route.js";

describe("parseRoute", () => {
  it("reads the overview from an empty fragment", () => {
    for (const hash of ["", "#", "#/", "#//"]) expect(parseRoute(hash)).toEqual({ view: "overview" });
  });

  it("reads every top view, with or without a trailing slash", () => {
    for (const view of TOP_VIEWS) {
      expect(parseRoute(`#/${view}`)).toEqual({ view });
      expect(parseRoute(`#/${view}/`)).toEqual({ view });
    }
  });

  it("reads a session's key and an assignment's id, percent-decoded, and writes them back", () => {
    const key = "telegram:default:dm:42/main";
    const route = parseRoute(hrefOf({ view: "session", key }));
    expect(route).toEqual({ view: "session", key });
    expect(parseRoute("#/assignments/a-1")).toEqual({ view: "assignment", id: "a-1" });
    expect(hrefOf({ view: "assignment", id: "a 1" })).toBe("#/assignments/a%201");
    expect(sectionOf(route)).toBe("sessions");
  });

  it("sends anything else to the not-found view, naming the path", () => {
    expect(parseRoute("#/nope")).toEqual({ view: "not-found", path: "/nope" });
    expect(parseRoute("#/overview/x")).toEqual({ view: "not-found", path: "/overview/x" });
    expect(parseRoute("#/sessions/%E0%A4%A")).toEqual({ view: "not-found", path: "/sessions/%E0%A4%A" });
    expect(parseRoute("#token=abc")).toEqual({ view: "not-found", path: "/token=abc" });
    expect(sectionOf(parseRoute("#/nope"))).toBeUndefined();
  });
});
