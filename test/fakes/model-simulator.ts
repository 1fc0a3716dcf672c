/**
 * The model fake for tests: the gateway's own simulator (src/simulator), re-exported so every
 * test imports its fakes from test/fakes/.
 */
export {
  defaultResponder,
  ModelSimulator,
  type ModelSimulatorOptions,
  type Responder,
  type ScriptedTurn,
  type SimulatedError,
  type SimulatedProtocol,
  type SimulatedRequest,
  type SimulatedUsage,
} from "../../src/simulator/model-simulator.js";
