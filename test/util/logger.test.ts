/**
 * The log file: rotation by size into a bounded set of owner-only files, and a file that
 * cannot be written reported once on the side while logging to the main destination goes on.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createLogger, rotatedLogFiles } from "../../src/util/logger.js";
import { until } from "../helpers/until.js";

const root = mkdtempSync(join(tmpdir(), "sy-logger-"));
let seq = 0;
const freshDir = () => join(root, `case-${++seq}`);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A main destination that keeps its lines. */
function sink() {
  const lines: string[] = [];
  return { lines, stream: { write: (line: string) => void lines.push(line) } };
}

function fileLines(path: string): string[] {
  return readFileSync(path, "utf8").split("\n").filter(Boolean);
}

describe("createLogger with a file", () => {
  it("rotates by size into file.1 … file.N, keeps N, and writes owner-only files", async () => {
    const dir = join(freshDir(), "logs");
    const file = join(dir, "switchyard.log");
    const main = sink();
    const logger = createLogger({
      destination: main.stream,
      format: "json",
      file,
      maxFileBytes: 2_000,
      maxFiles: 2,
    });
    for (let i = 0; i < 100; i++) logger.info({ i }, `line ${i}`);
    // The file stream writes in order; once the last line is in the current file, every
    // rotation before it has finished.
    await until(
      () => rotatedLogFiles(file)[0] === file && fileLines(file).some((l) => l.includes('"msg":"line 99"')),
      "the last line in the current file",
    );
    expect(readdirSync(dir).sort()).toEqual(["switchyard.log", "switchyard.log.1", "switchyard.log.2"]);
    expect(rotatedLogFiles(file)).toEqual([file, `${file}.1`, `${file}.2`]);
    const kept = [`${file}.2`, `${file}.1`, file]
      .flatMap(fileLines)
      .map((l) => JSON.parse(l) as { i: number });
    const numbers = kept.map((l) => l.i);
    // Contiguous and ending with the newest line: older lines were dropped with the oldest file.
    expect(numbers).toEqual(numbers.map((_, k) => 100 - numbers.length + k));
    expect(numbers.length).toBeLessThan(100);
    for (const f of [`${file}.1`, `${file}.2`]) {
      // Rotated at the first line reaching the size: at most one line over.
      expect(statSync(f).size).toBeGreaterThanOrEqual(2_000);
      expect(statSync(f).size).toBeLessThan(2_200);
    }
    for (const f of rotatedLogFiles(file)) expect(statSync(f).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(main.lines).toHaveLength(100);
  });

  it("continues numbering after a restart and tightens a file an older version left readable", async () => {
    const dir = freshDir();
    const file = join(dir, "switchyard.log");
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, `${"x".repeat(50)}\n`, { mode: 0o644 });
    const logger = createLogger({ destination: sink().stream, format: "json", file, maxFileBytes: 100 });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    logger.info("after restart");
    await until(() => rotatedLogFiles(file).length === 2, "a rotation");
    expect(fileLines(`${file}.1`)[0]).toBe("x".repeat(50));
    expect(fileLines(`${file}.1`)[1]).toContain('"msg":"after restart"');
  });

  it("reports an unwritable folder once and keeps logging to the main destination", () => {
    const dir = freshDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "not-a-folder"), "");
    const file = join(dir, "not-a-folder", "logs", "switchyard.log");
    const reported: string[] = [];
    const main = sink();
    const logger = createLogger({
      destination: main.stream,
      format: "json",
      file,
      onFileError: (line) => reported.push(line),
    });
    logger.info("one");
    logger.info("two");
    expect(reported).toHaveLength(1);
    expect(reported[0]).toContain(`cannot write the log file ${file}`);
    expect(reported[0]).toMatch(/EEXIST|ENOTDIR/); // the problem, as the system names it
    expect(main.lines).toHaveLength(2);
  });

  it("reports a file that fails after opening once (here: a folder in its place) and keeps logging", async () => {
    const dir = freshDir();
    const file = join(dir, "switchyard.log");
    mkdirSync(file, { recursive: true });
    const reported: string[] = [];
    const main = sink();
    const logger = createLogger({
      destination: main.stream,
      format: "json",
      file,
      onFileError: (line) => reported.push(line),
    });
    logger.info("one");
    await until(() => reported.length > 0, "the file error");
    for (let i = 0; i < 5; i++) logger.info(`after ${i}`);
    await until(() => main.lines.length === 6, "lines on the main destination");
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatch(new RegExp(`cannot write the log file ${file}: .*not a file`));
  });

  it("refuses bad sizes and counts, naming the field", () => {
    const file = join(freshDir(), "x.log");
    expect(() => createLogger({ file, maxFileMb: 0.5 })).toThrow(
      "logger maxFileMb: found 0.5, expected a number of at least 1",
    );
    expect(() => createLogger({ file, maxFiles: 0 })).toThrow(
      "logger maxFiles: found 0, expected a whole number of at least 1",
    );
    expect(() => createLogger({ file, maxFileBytes: -1 })).toThrow("logger maxFileBytes: found -1");
  });
});
