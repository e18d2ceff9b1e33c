import { backendIdentifier, checkGlobalIdParts, decodeGlobalId, encodeGlobalId } from '../../adapters/contract/ids';
import { pathSegment } from '../../adapters/contract/input';
import { decodeCursor, encodeCursor } from '../../adapters/listing';
import { quote } from '../../adapters/nomad/volumes/filter';
import { parseNomadJson } from '../../adapters/nomad/client';
import { nanosToIso } from '../../adapters/nomad/wire/scalars';
import { attachmentState } from '../../adapters/nomad/volumes/status';
import { ErrorCode, GatewayError } from '../../adapters/contract/errors';
// The backends' identifier schemes, as loading their backends defines them.
import '../../adapters/nomad/ids';
import '../../adapters/openstack/ids';

describe('global ids', () => {
  it('should round-trip every part, including characters that are legal in Nomad ids', () => {
    const parts = { kind: 'Volume' as const, backend: 'east', scope: 'team:a', nativeId: 'vol:1@x', subId: undefined };
    expect(decodeGlobalId(encodeGlobalId(parts), 'Volume')).toEqual(parts);
    const att = { kind: 'Attachment' as const, backend: 'b', scope: 'default', nativeId: 'v', subId: 'alloc-1' };
    expect(decodeGlobalId(encodeGlobalId(att), 'Attachment')).toEqual(att);
  });

  it('should reject an id of another kind with BAD_USER_INPUT', () => {
    const id = encodeGlobalId({ kind: 'Plugin', backend: 'b', scope: '_', nativeId: 'p' });
    expect(() => decodeGlobalId(id, 'Volume')).toThrow(expect.objectContaining({ code: ErrorCode.BadUserInput }));
  });
});

describe('identifier rules', () => {
  const bad = expect.objectContaining({ code: ErrorCode.BadUserInput });

  it('should refuse "*", ".", lone surrogates and dot segments in any global id part', () => {
    for (const parts of [
      { kind: 'Volume' as const, backend: 'b', scope: '*', nativeId: 'v' },
      { kind: 'Volume' as const, backend: 'b', scope: 'default', nativeId: '.' },
      { kind: 'Volume' as const, backend: 'b', scope: 'default', nativeId: 'a\ud800' },
      { kind: 'Attachment' as const, backend: 'b', scope: 'default', nativeId: 'v', subId: '\udc00' },
    ]) {
      expect(() => decodeGlobalId(encodeGlobalId(parts), null)).toThrow(bad);
    }
  });

  it("should apply each backend kind's rule per position, to id parts as to arguments", () => {
    expect(backendIdentifier('NOMAD', 'namespace', 'team-a', 'namespace')).toBe('team-a');
    expect(() => backendIdentifier('NOMAD', 'namespace', 'team_a', 'namespace')).toThrow(bad);
    expect(() => backendIdentifier('OPENSTACK', 'volume', 'vol-1', 'nativeId')).toThrow(bad);
    expect(backendIdentifier('NOMAD', 'volume', 'vol-1', 'nativeId')).toBe('vol-1');
    const snap = { kind: 'Snapshot' as const, backend: 'b', scope: 'aws-ebs0', nativeId: 'snap-1' };
    expect(checkGlobalIdParts(snap, 'NOMAD')).toEqual(snap); // Nomad scopes snapshots by plugin
    expect(() => checkGlobalIdParts(snap, 'OPENSTACK')).toThrow(bad);
  });

  it("should take each kind's scheme from its backend folder, and refuse a kind that has none", () => {
    // A fresh module registry: the contract alone knows no kind until a backend is loaded.
    jest.isolateModules(() => {
      /* eslint-disable @typescript-eslint/no-require-imports -- the isolated registry loads what require() names, in this order */
      const ids = require('../../adapters/contract/ids') as typeof import('../../adapters/contract/ids');
      expect(() => ids.backendIdentifier('NOMAD', 'namespace', 'team-a', 'namespace')).toThrow(/no identifier scheme/);
      require('../../adapters/nomad/backend');
      require('../../adapters/openstack/backend');
      /* eslint-enable @typescript-eslint/no-require-imports */
      expect(() => ids.backendIdentifier('NOMAD', 'namespace', 'team_a', 'namespace')).toThrow(bad);
      expect(() => ids.backendIdentifier('OPENSTACK', 'snapshot', 'snap-1', 'nativeId')).toThrow(bad);
      expect(() => ids.defineIdentifierScheme('NOMAD', { rules: {}, snapshotScope: 'namespace' })).toThrow(
        /two identifier schemes/,
      );
    });
  });

  it('should encode path segments without ever throwing a URIError', () => {
    expect(pathSegment('a b/c')).toBe('a%20b%2Fc');
    for (const v of ['', '.', '..', 'x\ud800']) expect(() => pathSegment(v)).toThrow(bad);
  });
});

describe('cursors', () => {
  it('should round-trip and reject cursors naming a backend outside the listing', () => {
    const c = encodeCursor({ backend: 'east', token: 'default.vol-1' });
    expect(decodeCursor(c, ['east'])).toEqual({ backend: 'east', token: 'default.vol-1' });
    expect(() => decodeCursor(c, ['west'])).toThrow(GatewayError);
  });
});

describe('Nomad mapping helpers', () => {
  it('should write bexpr literals raw in backticks, or double-quoted when the value holds a backtick', () => {
    expect(quote('a"b\\c')).toBe('`a"b\\c`');
    expect(quote('a`b\\c')).toBe('"a`b\\\\c"');
    expect(() => quote('a`"')).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
  });

  it('should render nanosecond timestamps exactly and 0 as null', () => {
    expect(nanosToIso(1736191825846395400n)).toBe('2025-01-06T19:30:25.846395400Z');
    expect(nanosToIso(0)).toBeNull();
  });

  it.each([
    ['pending', 'run', 'ATTACHING'],
    ['running', 'run', 'ATTACHED'],
    ['running', 'stop', 'DETACHING'],
    ['complete', 'stop', 'DETACHING'],
    ['failed', 'run', 'DETACHING'],
    ['lost', 'stop', 'DETACHING'],
    ['unknown', 'run', 'ERROR'],
  ])('should map client status %s / desired %s to %s', (client, desired, state) => {
    expect(attachmentState({ ClientStatus: client, DesiredStatus: desired } as never)).toBe(state);
  });
});

describe('Nomad JSON parsing', () => {
  it('should keep every digit of integers beyond 2^53 and leave string content alone', () => {
    const text =
      '{"ModifyTime":1736191825846395400,"Capacity":10737418240,"Name":"x,\\"T\\":12345678901234567,","N":{"D": -12345678901234567 }}';
    expect(parseNomadJson(text)).toEqual({
      ModifyTime: '1736191825846395400',
      Capacity: 10737418240,
      Name: 'x,"T":12345678901234567,',
      N: { D: '-12345678901234567' },
    });
  });
});
