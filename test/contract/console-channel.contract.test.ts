/** The channel contract against the console channel (`/v1/console`, used by `switchyard chat`). */
import { httpContractOptions, startHttpChannelHarness } from "../channels/http/http-channel-harness.js";
import { runChannelContract } from "./channel-contract.js";

runChannelContract("console", (sink) => startHttpChannelHarness("console", sink), httpContractOptions);
