// An agent served by the official A2A JavaScript SDK, for the proxy's
// cross-implementation tests (internal/proxy/jsagent_test.go).
//
// usage: node agent.mjs [port]   (0 or none: any free port)
//
// It listens on 127.0.0.1 only and prints one line, "listening <port>",
// once it serves. JSON-RPC is at /jsonrpc (v1.0, and v0.3 through the
// SDK's legacy compatibility layer), HTTP+JSON at /rest (v1.0); the card
// is at /.well-known/agent-card.json. Behaviour, by the message's text:
//   "ask"  → input-required ("which city?"); the reply completes the task
//   "wait" → working until canceled
//   else   → working, one artifact "echo: <text>", completed
import express from 'express';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';

const port = Number(process.argv[2] ?? process.env.JSAGENT_PORT ?? 0);

const textOf = (msg) =>
  (msg?.parts ?? [])
    .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
    .join('');

const agentMessage = (taskId, contextId, text) => ({
  messageId: crypto.randomUUID(),
  contextId,
  taskId,
  role: Role.ROLE_AGENT,
  parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

const status = (taskId, contextId, state, text) =>
  AgentEvent.statusUpdate({
    taskId,
    contextId,
    status: {
      state,
      message: text ? agentMessage(taskId, contextId, text) : undefined,
      timestamp: new Date().toISOString(),
    },
    metadata: undefined,
  });

const canceled = new Set();

const executor = {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const text = textOf(ctx.userMessage);
    bus.publish(
      AgentEvent.task(
        ctx.task ?? {
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
          artifacts: [],
          history: [ctx.userMessage],
          metadata: undefined,
        },
      ),
    );
    bus.publish(status(taskId, contextId, TaskState.TASK_STATE_WORKING));
    if (text === 'ask' && !ctx.task) {
      bus.publish(status(taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, 'which city?'));
      bus.finished();
      return;
    }
    if (text === 'wait') {
      while (!canceled.has(taskId)) {
        await new Promise((r) => setTimeout(r, 20));
      }
      bus.finished();
      return;
    }
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: 'echo',
          name: 'echo',
          description: '',
          parts: [{ content: { $case: 'text', value: 'echo: ' + text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(status(taskId, contextId, TaskState.TASK_STATE_COMPLETED));
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    canceled.add(taskId);
    bus.publish(status(taskId, '', TaskState.TASK_STATE_CANCELED));
    bus.finished();
  },
};

const app = express();
const server = app.listen(port, '127.0.0.1', () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  const card = {
    name: 'JS SDK agent',
    description: 'An agent served by @a2a-js/sdk.',
    version: '1.0.0',
    supportedInterfaces: [
      { url: `${base}/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
      { url: `${base}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: '' },
      { url: `${base}/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '0.3', tenant: '' },
    ],
    provider: undefined,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Echoes the text.', tags: ['echo'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use('/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } }));
  app.use('/rest', restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  console.log(`listening ${server.address().port}`);
});

// The test ends the process by closing its stdin (or killing it).
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
