/**
 * `npm run chaos -- --channel telegram|slack|discord --kills N --messages M [--chats C] [--seed S] [--json]`:
 * drives the built gateway against a fake chat platform and a streaming fake model, SIGKILLs it at
 * random and at aimed moments, restarts it at once, and judges what the chats finally show.
 * Exit 0 when nothing was lost, duplicated, out of order, in the wrong chat or stalled; 1 when
 * something was (or the run could not be carried out); 2 for a bad flag.
 */
import { randomInt } from "node:crypto";
import { FlagError, parseFlags } from "./flags.js";
import { runChaos } from "./chaos-run.js";
import { humanReport } from "./report.js";
import { passed } from "./verdict.js";

async function main(argv: string[]): Promise<number> {
  let flags: ReturnType<typeof parseFlags>;
  try {
    flags = parseFlags(argv, () => randomInt(0, 2 ** 31));
  } catch (error) {
    if (!(error instanceof FlagError)) throw error;
    process.stderr.write(`chaos: ${error.message}\n`);
    return 2;
  }
  const interrupt = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => interrupt.abort(`interrupted (${signal})`);
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const progress = flags.json ? () => {} : (line: string) => process.stderr.write(`chaos: ${line}\n`);
  try {
    const result = await runChaos(flags, progress, interrupt.signal);
    if (flags.json) {
      process.stdout.write(`${JSON.stringify(result.summary)}\n`);
      if (result.keptHome) process.stderr.write(`chaos: gateway home kept at ${result.keptHome}\n`);
    } else process.stdout.write(humanReport(result));
    return passed(result.summary) ? 0 : 1;
  } catch (error) {
    const reason = interrupt.signal.aborted
      ? String(interrupt.signal.reason)
      : error instanceof Error
        ? error.message
        : String(error);
    process.stderr.write(`chaos: the run could not be completed: ${reason}\n`);
    return 1;
  } finally {
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
  }
}

process.exitCode = await main(process.argv.slice(2));
