/**
 * A create's kind-specific parts (`input.nomad`, `input.cinder`) are refused or required by what
 * each backend declares (`VolumeBackend.createInput`), never by its kind: the texts clients get
 * stay those of the two kinds, and a backend of any other kind is held to its own declaration.
 */
import type { VolumeBackend } from '../../adapters/contract/backend';
import { BadUserInputError } from '../../adapters/contract/errors';
import type { CreateVolumeInput } from '../../schema/generated/resolvers-types';
import { createVolumeSpec } from '../../resolvers/args';
import { createRegistry } from '../../server/backends';

const registry = createRegistry([
  { id: 'east', kind: 'nomad', url: 'http://127.0.0.1:9', timeoutMs: 1000, maxConnections: 1, readRetries: 0 },
  {
    id: 'os',
    kind: 'openstack',
    url: 'http://127.0.0.1:9/v3',
    region: 'RegionOne',
    interface: 'public',
    operationTimeoutMs: 1000,
    watchFastMs: 500,
    watchSlowMs: 1000,
    timeoutMs: 1000,
    maxConnections: 1,
    readRetries: 0,
  },
]);
afterAll(() => registry.close());

const nomadPart = {
  nativeId: 'v1',
  plugin: 'aws-ebs0',
  capabilities: [{ accessMode: 'SINGLE_NODE_WRITER' as const, attachmentMode: 'FILE_SYSTEM' as const }],
};
const spec = (
  b: Parameters<typeof createVolumeSpec>[1],
  input: Partial<CreateVolumeInput>,
  configured: readonly Pick<VolumeBackend, 'createInput'>[] = registry.all,
) => createVolumeSpec({ backend: b.id, name: 'v', ...input }, b, configured);
const refusal = (f: () => unknown): { message: string } => {
  try {
    f();
  } catch (err) {
    if (err instanceof BadUserInputError) return { message: err.message };
    throw err;
  }
  throw new Error('not refused');
};

describe('a create’s kind-specific parts', () => {
  const east = registry.forId('east');
  const os = registry.forId('os');

  it('should refuse a part given to a backend of another kind, naming its owner', () => {
    expect(refusal(() => spec(os, { nomad: nomadPart })).message).toBe('input.nomad is for Nomad backends');
    expect(refusal(() => spec(east, { nomad: nomadPart, cinder: { volumeType: 'x' } })).message).toBe(
      'input.cinder is for OpenStack backends',
    );
  });

  it('should require the part a backend declares required, and take it', () => {
    expect(refusal(() => spec(east, {})).message).toBe(
      'a Nomad volume needs input.nomad (its id, plugin and capabilities)',
    );
    // The part goes to the backend untouched: it parses it itself.
    expect(spec(east, { nomad: nomadPart }).own).toEqual(nomadPart);
    expect(spec(os, { cinder: { volumeType: 'lvm' } }).own).toEqual({ volumeType: 'lvm' });
    expect(spec(os, {}).own).toBeUndefined();
  });

  it('should go by the backend’s declaration, not its kind (a third kind reusing a part)', () => {
    // Nomad's identifier rules, but the part is optional for it.
    const lab = { id: 'lab', kind: 'NOMAD' as const, createInput: { field: 'nomad', owner: 'Lab' } };
    expect(spec(lab, { nomad: nomadPart }, [lab]).own).toEqual(nomadPart);
    expect(spec(lab, {}, [lab]).own).toBeUndefined();
    const bare: Pick<VolumeBackend, 'id' | 'kind' | 'createInput'> = { id: 'bare', kind: 'NOMAD' };
    expect(spec(bare, {}, [bare]).own).toBeUndefined();
    expect(refusal(() => spec(bare, { nomad: nomadPart }, [bare])).message).toBe(
      'input.nomad is not for backend "bare"',
    );
  });
});
