import { fc, test } from '@fast-check/vitest';
import { agentExecutionMachine, type AgentExecutionEvent } from '../../machines/agent-execution-machine.js';
import { AGENT_EXECUTION_TABLE } from '../../machines/agent-execution-table.js';
import { FIRST_MODEL, agentEvent, agentOracle } from './support/agent-oracle.js';
import { checkAgainstTable, withAbsoluteTime } from './support/table-checker.js';

test.prop([fc.array(agentEvent, { maxLength: 80 }), fc.nat()], { numRuns: 1000 })(
  'the agent execution machine follows the spec table',
  (steps, restoreAt) => {
    const events = withAbsoluteTime<AgentExecutionEvent>(steps) as AgentExecutionEvent[];
    checkAgainstTable(
      agentExecutionMachine,
      undefined,
      AGENT_EXECUTION_TABLE,
      agentOracle,
      FIRST_MODEL,
      events,
      restoreAt,
    );
  },
);
