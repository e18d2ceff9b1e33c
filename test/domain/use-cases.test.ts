/**
 * The use cases of domain/ called directly, without GraphQL: the memory backend configured as the
 * server configures it (`GATEWAY_BACKENDS=lab=memory` with a data file), the real operation tracker
 * and idempotency store, and an execution context as every transport builds it. What the resolvers
 * add (argument paths, the schema's shapes) is tested over HTTP in test/gateway/.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayError } from '../../adapters/contract/errors';
import type { MemoryData } from '../../adapters/memory/data/shape';
import {
  attachVolume,
  createVolume,
  loadOperation,
  operationId,
  registerVolume,
  updateVolume,
  volumeId,
  type IdempotencyInput,
} from '../../domain';
import { createRegistry } from '../../server/backends';
import { DEFAULT_LIMITS, ExecutionLimits } from '../../server/limits';
import { loadConfig } from '../../server/config';
import { createExecutionContext, type GatewayContext, type GatewayServices } from '../../domain/context';
import { InProcessIdempotencyStore } from '../../server/idempotency';
import { OperationTracker } from '../../subscriptions/operations';

const GiB = 1024 ** 3;
let dir: string;
let services: GatewayServices;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'domain-'));
  const file = join(dir, 'data.json');
  const data: MemoryData = {
    volumes: [{ namespace: 'team', id: 'vol-a', name: 'a', sizeBytes: GiB }],
    tokens: [
      { token: 'writer', grants: [{ namespace: 'team', write: true }] },
      { token: 'outsider', grants: [{ namespace: 'elsewhere', write: true }] },
    ],
  };
  writeFileSync(file, JSON.stringify(data));
  const registry = createRegistry(
    loadConfig({
      GATEWAY_BACKENDS: 'lab=memory',
      GATEWAY_BACKEND_LAB_DATA_FILE: file,
      GATEWAY_BACKEND_LAB_OPERATION_DELAY_MS: '50',
    }).backends,
  );
  const operations = new OperationTracker({
    changes: (id) => registry.find(id)?.trackedChanges,
    pollMs: 20,
    maxPollMs: 50,
  });
  services = { registry, operations, idempotency: new InProcessIdempotencyStore() };
});

afterAll(async () => {
  await services.operations.close();
  await Promise.all(services.registry.all.map((b) => b.close()));
  rmSync(dir, { recursive: true, force: true });
});

const as = (token: string): GatewayContext =>
  createExecutionContext(services, {
    credentials: new Map([['lab', { token }]]),
    limits: new ExecutionLimits(DEFAULT_LIMITS),
  });
const key = (k: string, request: unknown): IdempotencyInput => ({
  mutation: 'createVolume',
  key: k,
  request,
  argument: 'input.idempotencyKey',
});
const codeOf = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'resolved',
    (err: unknown) => (err instanceof GatewayError ? err.code : String(err)),
  );

describe('use cases without GraphQL', () => {
  it('should create once per idempotency key, answer the retry with the same volume and operation, and refuse the key for another input', async () => {
    const spec = { namespace: 'team', name: 'made-once', capacityMinBytes: GiB };
    const first = await createVolume(as('writer'), {
      backend: 'lab',
      spec,
      idempotency: key('k1', { name: 'made-once' }),
    });
    const retry = await createVolume(as('writer'), {
      backend: 'lab',
      spec,
      idempotency: key('k1', { name: 'made-once' }),
    });
    expect(first.operation.kind).toBe('CREATE_VOLUME');
    expect(retry.operation.id).toBe(first.operation.id);
    expect(retry.volume?.ref).toEqual(first.volume?.ref);
    const listed = await services.registry
      .forId('lab')
      .listVolumes({ namespace: 'team', limit: 100, token: null }, as('writer').call('lab'));
    expect(listed.items.filter((p) => p.item.name === 'made-once')).toHaveLength(1);
    expect(
      await codeOf(
        createVolume(as('writer'), {
          backend: 'lab',
          spec: { ...spec, name: 'other' },
          idempotency: key('k1', { name: 'other' }),
        }),
      ),
    ).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('should track an attach, read the volume back, and show the operation only to whom may see it', async () => {
    const ref = { backend: 'lab', namespace: 'team', nativeId: 'vol-a' };
    const done = await attachVolume(as('writer'), {
      volume: ref,
      target: { kind: 'host', connector: { host: 'h1' }, readOnly: false },
      idempotency: { mutation: 'attachVolume', key: null, request: null, argument: 'input.idempotencyKey' },
    });
    expect(done.operation).toMatchObject({ kind: 'ATTACH_VOLUME', targetId: volumeId(ref) });
    expect(done.volume?.ref).toEqual(ref);
    const id = operationId(done.operation);
    expect((await loadOperation(as('writer'), id))?.id).toBe(done.operation.id);
    // Neither its starter nor able to read its target: absent, like an unknown id.
    expect(await loadOperation(as('outsider'), id)).toBeNull();
  });

  it('should refuse a facet the backend lacks before checking the input that needs it', async () => {
    let checked = 0;
    const spec = () => {
      checked++;
      return { namespace: 'team', name: 'x' };
    };
    expect(await codeOf(registerVolume(as('writer'), { backend: 'lab', spec }))).toBe('UNSUPPORTED_BY_BACKEND');
    expect(checked).toBe(0);
    const renamed = await updateVolume(as('writer'), {
      volume: { backend: 'lab', namespace: 'team', nativeId: 'vol-a' },
      patch: () => ({ name: 'renamed' }),
    });
    expect(renamed).toMatchObject({
      volume: { name: 'renamed' },
      operation: { kind: 'UPDATE_VOLUME', state: 'SUCCEEDED' },
    });
  });
});
