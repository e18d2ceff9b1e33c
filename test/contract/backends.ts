/**
 * The backends the contract suite runs over: one fixture per backend, each a real backend built
 * the way the server builds it (`createRegistry`, as `server/backends.ts` does for the gateway)
 * and talking HTTP to its simulator, or (memory) holding its data itself. Adding a backend to the
 * suite is one entry in `FIXTURES`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallOptions, VolumeBackend, VolumeSpec } from '../../adapters/contract/backend';
import type { VolumeRef } from '../../adapters/contract/model';
import type { MemoryBackend } from '../../adapters/memory/backend';
import type { MemoryData } from '../../adapters/memory/data/shape';
import { loadConfig, type BackendEntry } from '../../server/config';
import { createRegistry } from '../../server/backends';
import { ANALYTICS_READ, MGMT, OS } from '../support/constants';
import { seedVolumes, startNomad, startOpenStack } from '../support/harness';

/** A backend under contract test, with callers, seeding and the simulator's controls. */
export interface ContractBackend {
  backend: VolumeBackend;
  /** The scope (namespace, project) the fixture's volumes live in. */
  scope: string;
  /** A caller that may read and change `scope`. */
  caller: CallOptions;
  /** A valid credential that may not read `scope`. */
  denied: CallOptions;
  /** A credential the backend does not know. */
  unknown: CallOptions;
  /** How the backend refuses, both allowed by the contract. */
  refuses: {
    /** `denied`'s reads of `scope`: a ForbiddenError, or hidden (empty lists, null reads) as OpenStack does for other projects. */
    denied: 'FORBIDDEN' | 'HIDDEN';
    /** The code of `unknown`'s calls (Nomad's CSI endpoints answer an unknown token like a lacking policy). */
    unknown: 'UNAUTHENTICATED' | 'FORBIDDEN';
  };
  /** Seeds `n` volumes in `scope` straight into the backend's store (not through the backend); their refs. */
  seed(n: number, prefix: string): Promise<VolumeRef[]>;
  /** A create specification in `scope` this backend accepts. */
  createSpec(name: string): VolumeSpec;
  /** A ref in `scope` that names no volume. */
  missing(): VolumeRef;
  /** Out-of-band changes, made through the simulator's HTTP control API (as another client would), or the memory backend's data file. */
  control: {
    /** Adds a volume named `name` in `scope`; its ref. */
    addVolume(name: string): Promise<VolumeRef>;
  };
  stop(): Promise<void>;
}

/** How to start one backend for the suite. */
export interface ContractFixture {
  /** Names the describe block. */
  name: string;
  start(): Promise<ContractBackend>;
}

/** The backend `config` builds, constructed as the server constructs it. */
function build(config: BackendEntry): VolumeBackend {
  return createRegistry([config]).all[0]!;
}

const GiB = 2 ** 30;

/** POSTs a control request to a simulator's `/_sim/` API; the parsed answer. */
async function control(baseUrl: string, route: string, body: unknown): Promise<any> {
  const res = await fetch(`${new URL(baseUrl).origin}/_sim/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`control ${route} answered ${res.status}: ${text}`);
  return text === '' ? null : JSON.parse(text);
}

const nomad: ContractFixture = {
  name: 'nomad (simulator)',
  async start() {
    const sim = await startNomad();
    const url = sim.url;
    const backend = build({ id: 'east', kind: 'nomad', url, token: MGMT, timeoutMs: 5_000, maxConnections: 16, readRetries: 0 });
    const ref = (nativeId: string): VolumeRef => ({ backend: backend.id, namespace: 'default', nativeId });
    return {
      backend,
      scope: 'default',
      caller: { credential: { token: MGMT } },
      denied: { credential: { token: ANALYTICS_READ } },
      unknown: { credential: { token: 'no-such-secret' } },
      refuses: { denied: 'FORBIDDEN', unknown: 'FORBIDDEN' },
      seed: async (n, prefix) => seedVolumes(sim, n, 'default', prefix).map(ref),
      createSpec: (name) => ({
        namespace: 'default',
        name,
        capacityMinBytes: GiB,
        own: { nativeId: name, plugin: 'aws-ebs0', capabilities: [{ accessMode: 'SINGLE_NODE_WRITER', attachmentMode: 'FILE_SYSTEM' }] },
      }),
      missing: () => ref('no-such-volume'),
      control: {
        async addVolume(name) {
          await control(url, 'volumes', { ID: name, Name: name, Namespace: 'default', PluginID: 'aws-ebs0', ExternalID: `ext-${name}`, Capacity: GiB, RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }] });
          return ref(name);
        },
      },
      stop: () => backend.close(),
    };
  },
};

const openstack: ContractFixture = {
  name: 'openstack (simulator)',
  async start() {
    const os = await startOpenStack();
    const backend = build(
      os.backend('os', {
        readRetries: 0,
        auth: { method: 'password', username: OS.adminUser, password: OS.adminPassword, projectName: 'demo' },
        watchFastMs: 50,
        watchSlowMs: 100,
      }),
    );
    const ref = (nativeId: string): VolumeRef => ({ backend: backend.id, namespace: os.demo, nativeId });
    return {
      backend,
      scope: os.demo,
      caller: { credential: { token: os.demoToken } },
      denied: { credential: { token: os.otherToken } },
      unknown: { credential: { token: 'gAAAAA-no-such-token' } },
      refuses: { denied: 'HIDDEN', unknown: 'UNAUTHENTICATED' },
      async seed(n, prefix) {
        const refs: VolumeRef[] = [];
        for (let i = 0; i < n; i++) refs.push(ref(os.sim.seedVolume({ project: 'demo', name: `${prefix} ${i}`, size: 1 })));
        return refs;
      },
      createSpec: (name) => ({ namespace: os.demo, name, capacityMinBytes: GiB }),
      missing: () => ref('00000000-0000-4000-8000-000000000000'),
      control: {
        async addVolume(name) {
          const created = await control(os.keystoneUrl, 'volumes', { project: 'demo', name, size: 1 });
          return ref(created.id as string);
        },
      },
      stop: () => backend.close(),
    };
  },
};

/**
 * The memory backend, configured as the server configures it (`GATEWAY_BACKENDS=lab=memory` with
 * a data file and a 100 ms delay). Out of band is its data file: seeding and control write it and
 * `reload()` reads it again, as an operator editing the file would.
 */
const memory: ContractFixture = {
  name: 'memory',
  async start() {
    const dir = mkdtempSync(join(tmpdir(), 'contract-memory-'));
    const file = join(dir, 'data.json');
    const data: MemoryData = {
      volumes: [],
      tokens: [
        { token: 'contract-writer', name: 'writer', grants: [{ namespace: 'contract', write: true }] },
        { token: 'contract-elsewhere', name: 'elsewhere', grants: [{ namespace: 'elsewhere', write: true }] },
      ],
    };
    writeFileSync(file, JSON.stringify(data));
    const env = { GATEWAY_BACKENDS: 'lab=memory', GATEWAY_BACKEND_LAB_DATA_FILE: file, GATEWAY_BACKEND_LAB_OPERATION_DELAY_MS: '100' };
    const backend = build(loadConfig(env).backends[0]!);
    const ref = (nativeId: string): VolumeRef => ({ backend: backend.id, namespace: 'contract', nativeId });
    /** Adds volumes to the data file and has the backend read it again. */
    const add = (ids: readonly string[], name: (id: string) => string): VolumeRef[] => {
      const now = (backend as MemoryBackend).snapshotData();
      now.volumes.push(...ids.map((id) => ({ namespace: 'contract', id, name: name(id), sizeBytes: GiB })));
      writeFileSync(file, JSON.stringify(now));
      (backend as MemoryBackend).reload();
      return ids.map(ref);
    };
    return {
      backend,
      scope: 'contract',
      caller: { credential: { token: 'contract-writer' } },
      denied: { credential: { token: 'contract-elsewhere' } },
      unknown: { credential: { token: 'no-such-token' } },
      refuses: { denied: 'FORBIDDEN', unknown: 'UNAUTHENTICATED' },
      seed: async (n, prefix) => add(Array.from({ length: n }, (_, i) => `${prefix}-${i}`), (id) => id.replace('-', ' ')),
      createSpec: (name) => ({ namespace: 'contract', name, capacityMinBytes: GiB }),
      missing: () => ref('no-such-volume'),
      control: { addVolume: async (name) => add([name], () => name)[0]! },
      async stop() {
        await backend.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

/** Every backend the contract suite runs over. A new backend adds its fixture here. */
export const FIXTURES: readonly ContractFixture[] = [nomad, openstack, memory];
