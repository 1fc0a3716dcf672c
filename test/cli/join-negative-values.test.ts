/** `--port -1` reaches the option's own check instead of parseArgs' "argument is ambiguous". */
import { describe, expect, it } from "vitest";
import { joinNegativeValues } from "../../src/cli/join-negative-values.js";

describe("joinNegativeValues", () => {
  it("joins a long option and a value that looks like a negative number", () => {
    expect(joinNegativeValues(["gateway", "--port", "-1"])).toEqual(["gateway", "--port=-1"]);
    expect(joinNegativeValues(["--last", "-0.5", "--json"])).toEqual(["--last=-0.5", "--json"]);
    expect(joinNegativeValues(["--port", "-.5"])).toEqual(["--port=-.5"]);
  });

  it("leaves everything else alone", () => {
    for (const argv of [
      ["--port=-1"],
      ["--port", "7420"],
      ["--json", "-h"],
      ["--sender", "-ann"],
      ["-f", "-1"],
      ["--", "--port", "-1"],
      ["--port"],
    ])
      expect(joinNegativeValues(argv)).toEqual(argv);
  });
});
