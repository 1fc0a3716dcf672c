/** The channel contract against the HTTP channel (`/v1/chat`). */
import { httpContractOptions, startHttpChannelHarness } from "../channels/http/http-channel-harness.js";
import { runChannelContract } from "./channel-contract.js";

runChannelContract("http", (sink) => startHttpChannelHarness("http", sink), httpContractOptions);
