/** The three machines as graphs (`GET /v1/machines`): what the inspector draws its statecharts from. */
import { agentExecutionMachine } from '../machines/agent-execution-machine.js';
import { gatewayRouteMachine } from '../machines/gateway-route-machine.js';
import { machineGraph } from '../machines/machine-graph.js';
import { sandboxMachine } from '../machines/sandbox-machine.js';
import type { MachineGraphs } from '../protocol/inspector-api.js';

/** Read once from the machine definitions: they do not change while a process runs. */
export const MACHINE_GRAPHS: MachineGraphs = {
  sandbox: machineGraph(sandboxMachine),
  gateway_route: machineGraph(gatewayRouteMachine),
  agent_execution: machineGraph(agentExecutionMachine),
};
