/** The Prometheus registry's label keys: sorted, escaped only where needed, one series per set. */
import { describe, expect, it } from "vitest";
import { Counter } from "../../src/gateway/metrics.js";

describe("Counter labels", () => {
  it("keeps one series per label set, whatever the order the labels come in", () => {
    const c = new Counter("switchyard_test_total", "test");
    c.inc({ outcome: "answered", trigger: "message" });
    c.inc({ trigger: "message", outcome: "answered" }, 2);
    expect(c.get({ trigger: "message", outcome: "answered" })).toBe(3);
    expect(c.render()).toContain('switchyard_test_total{outcome="answered",trigger="message"} 3');
  });

  it("escapes backslashes and quotes in values, and renders a series without labels bare", () => {
    const c = new Counter("switchyard_test_total", "test");
    c.inc({ path: 'C:\\tmp\\"x"' });
    c.inc();
    expect(c.render()).toContain('switchyard_test_total{path="C:\\\\tmp\\\\\\"x\\""} 1');
    expect(c.render()).toContain("\nswitchyard_test_total 1");
  });
});
