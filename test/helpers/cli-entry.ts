// Runs the CLI from source (tests spawn it with `node --import tsx`).
import { main } from "../../src/main.js";

process.exitCode = await main(process.argv.slice(2));
