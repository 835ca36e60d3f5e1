// The official A2A JavaScript SDK's client driving the registry as an A2A
// agent, for internal/a2aagent/jssdk_test.go.
//
// usage: node client.mjs <base URL> <X-Test-Caller>
//
// It reads the registry's card with the SDK's resolver and, over each
// interface the card declares, asks one question and one follow-up in the
// same context, printing one JSON line per interface:
//   {"binding", "version", "completed", "first": [ids], "followUp": [ids], "error"}
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';

const [base, caller] = process.argv.slice(2);
const fetchImpl = (url, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set('X-Test-Caller', caller);
  return fetch(url, { ...init, headers });
};

const message = (text, contextId) => ({
  messageId: crypto.randomUUID(),
  contextId: contextId ?? '',
  taskId: '',
  role: Role.ROLE_USER,
  parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

// ids of the agents in the data part of a task's artifact.
const ids = (task) => {
  const out = [];
  for (const a of task?.artifacts ?? []) {
    for (const p of a.parts ?? []) {
      const c = p.content;
      if (c?.$case === 'data') {
        const v = c.value?.entries ?? c.value?.data?.entries ?? [];
        for (const e of v) out.push(e.id);
      }
    }
  }
  return out;
};

const taskOf = (res) => (res?.$case === 'task' ? res.value : res?.payload?.$case === 'task' ? res.payload.value : res);

const card = await new DefaultAgentCardResolver({ fetchImpl }).resolve(base);
for (const iface of card.supportedInterfaces) {
  const line = { binding: iface.protocolBinding, version: iface.protocolVersion };
  try {
    const factory = new ClientFactory({
      transports: [
        new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }),
        new RestTransportFactory({ fetchImpl, legacyCompat: { enabled: true } }),
      ],
    });
    const client = await factory.createFromAgentCard({ ...card, supportedInterfaces: [iface] });
    const first = taskOf(await client.sendMessage({ message: message('find an agent that converts currencies and accepts JSON') }));
    line.completed = first?.status?.state === TaskState.TASK_STATE_COMPLETED;
    line.first = ids(first);
    const next = taskOf(await client.sendMessage({ message: message('over gRPC', first?.contextId) }));
    line.followUp = ids(next);
  } catch (e) {
    line.error = String(e?.message ?? e);
  }
  console.log(JSON.stringify(line));
}
