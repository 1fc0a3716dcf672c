/** The Prometheus registry: label keys sorted and escaped as the text format says (\\, \", \n), one series per set. */
import { describe, expect, it } from "vitest";
import { Counter, GatewayMetrics } from "../../src/gateway/metrics.js";

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

/** One sample line of the text exposition format: name, then `{k="v",…}` with only \\, \" and \n escaped. */
const SAMPLE =
  /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*")*\})? \S+$/;

describe("the /metrics page", () => {
  it("escapes a newline, a quote and a backslash in a label value, so every line parses", () => {
    const metrics = new GatewayMetrics();
    const model = 'claude\n"x"\\y';
    metrics.modelCalls.inc({ provider: "anthropic", model, profile: "default", outcome: "ok" });
    metrics.runDuration.observe(0.5);
    metrics.gauge("switchyard_test_gauge", "test", () => [[{ model }, 1]]);
    const page = metrics.render();
    expect(page).toContain(
      'switchyard_model_calls_total{model="claude\\n\\"x\\"\\\\y",outcome="ok",profile="default",provider="anthropic"} 1',
    );
    expect(page).toContain('switchyard_test_gauge{model="claude\\n\\"x\\"\\\\y"} 1');
    const lines = page.trimEnd().split("\n");
    for (const line of lines) {
      if (line.startsWith("# HELP ") || line.startsWith("# TYPE ")) continue;
      expect(line).toMatch(SAMPLE);
    }
  });
});
