/**
 * Go-compatibility helpers: the JSON encoder (declaration order, exact int64), the request
 * decoder (encoding/json error texts), and strconv/time parsing used for query parameters.
 */
import { encodeGo } from '../../simulators/nomad/encode';
import { decodeGoJSON, GoDecodeError, registerRequestType } from '../../simulators/nomad/decode';
import {
  humanizeBytes,
  multierror,
  parseBool,
  parseDuration,
  parseGoInt,
  parseGoQuery,
  rfc3339Nano,
} from '../../simulators/nomad/golang';

describe('encodeGo', () => {
  it('writes fields in insertion order and int64 values exactly', () => {
    const out = encodeGo({
      Z: 1,
      A: { ModifyTime: 1736191825846395400n, CreateTime: 0 },
      M: new Map([
        ['b', null],
        ['a', null],
      ]),
      L: [],
      N: null,
    });
    expect(out).toBe(
      '{"Z":1,"A":{"ModifyTime":1736191825846395400,"CreateTime":0},"M":{"b":null,"a":null},"L":[],"N":null}',
    );
  });

  it('pretty-prints with 4 spaces like go-msgpack', () => {
    expect(encodeGo({ A: [1], B: {}, C: [] }, true)).toBe(
      '{\n    "A": [\n        1\n    ],\n    "B": {},\n    "C": []\n}',
    );
  });

  it('keeps HTML characters and escapes controls and line separators', () => {
    expect(encodeGo('<a&b>\n\u2028"\\')).toBe('"<a&b>\\n\\u2028\\"\\\\"');
  });
});

describe('decodeGoJSON (encoding/json semantics)', () => {
  const err = (body: string): string => {
    try {
      decodeGoJSON(Buffer.from(body), registerRequestType);
    } catch (e) {
      if (e instanceof GoDecodeError) return e.message;
      throw e;
    }
    throw new Error('expected an error');
  };

  it.each([
    ['{"Volumes": [}', "invalid character '}' looking for beginning of value"],
    ['{"Volumes" []}', "invalid character '[' after object key"],
    ['{"Volumes": [] "x": 1}', "invalid character '\"' after object key:value pair"],
    ['{Volumes: []}', "invalid character 'V' looking for beginning of object key string"],
    ['[1 2]', "invalid character '2' after array element"],
    ['{"Volumes": [{"ID": "a', 'unexpected EOF'],
    ['   ', 'EOF'],
    ['{"Volumes": tru}', "invalid character '}' in literal true (expecting 'e')"],
    ['{"Volumes": -x}', "invalid character 'x' in numeric literal"],
    [
      '{"Volumes": "x"}',
      'json: cannot unmarshal string into Go struct field CSIVolumeRegisterRequest.Volumes of type []*structs.CSIVolume',
    ],
    [
      '{"Volumes": ["x"]}',
      'json: cannot unmarshal string into Go struct field CSIVolumeRegisterRequest.Volumes of type structs.CSIVolume',
    ],
    [
      '{"Volumes": [{"Capacity": "10"}]}',
      'json: cannot unmarshal string into Go struct field CSIVolume.Volumes.Capacity of type int64',
    ],
    [
      '{"Volumes": [{"Capacity": 1.5}]}',
      'json: cannot unmarshal number 1.5 into Go struct field CSIVolume.Volumes.Capacity of type int64',
    ],
    [
      '{"Volumes": [{"Parameters": {"a": 1}}]}',
      'json: cannot unmarshal number into Go struct field CSIVolume.Volumes.Parameters of type string',
    ],
    [
      '{"Volumes": [{"Topologies": [{"Segments": []}]}]}',
      'json: cannot unmarshal array into Go struct field CSITopology.Volumes.Topologies.Segments of type map[string]string',
    ],
    ['[1]', 'json: cannot unmarshal array into Go value of type structs.CSIVolumeRegisterRequest'],
  ])('%s → %s', (body, message) => {
    expect(err(body)).toBe(message);
  });

  it('matches fields case-insensitively, ignores unknown fields and trailing data', () => {
    const d = decodeGoJSON(
      Buffer.from(
        '{"volumes":[{"id":"v1","FsType":"x","mountoptions":{"fstype":"ext4"},"Capacity":9007199254740993}]} trailing',
      ),
      registerRequestType,
    );
    const v = (d.Volumes as Array<Record<string, unknown>>)[0]!;
    expect(v.ID).toBe('v1');
    expect(v.MountOptions).toEqual({ FSType: 'ext4', MountFlags: null });
    expect(v.Capacity).toBe(9007199254740993n);
  });
});

describe('Go parsing helpers', () => {
  it('parses durations and rejects bad ones', () => {
    expect(parseDuration('1m30s')).toBe(90_000_000_000n);
    expect(parseDuration('1.5h')).toBe(5_400_000_000_000n);
    expect(parseDuration('250ms')).toBe(250_000_000n);
    expect(() => parseDuration('10')).toThrow();
    expect(() => parseDuration('ten')).toThrow();
  });

  it('follows strconv', () => {
    expect(parseBool('T')).toBe(true);
    expect(() => parseBool('yes')).toThrow('strconv.ParseBool: parsing "yes": invalid syntax');
    expect(parseGoInt('18446744073709551615', 10, 64, true)).toBe(18446744073709551615n);
    expect(() => parseGoInt('-1', 10, 64, true)).toThrow('invalid syntax');
    expect(() => parseGoInt('2147483648', 10, 32, false)).toThrow('value out of range');
    expect(parseGoInt('0x1_0', 0, 64, false)).toBe(16n);
  });

  it('parses queries like url.ParseQuery', () => {
    const q = parseGoQuery('a=1&a=2&b=x+y%21&bad=%zz&c');
    expect([...q.entries()]).toEqual([
      ['a', ['1', '2']],
      ['b', ['x y!']],
      ['c', ['']],
    ]);
  });

  it('formats like Go', () => {
    expect(rfc3339Nano(1736191825846395400n)).toBe('2025-01-06T19:30:25.8463954Z');
    expect(rfc3339Nano(1736191800000000000n)).toBe('2025-01-06T19:30:00Z');
    expect(multierror(['a'])).toBe('1 error occurred:\n\t* a\n\n');
    expect(multierror(['a', 'b'])).toBe('2 errors occurred:\n\t* a\n\t* b\n\n');
    expect(humanizeBytes(10737418240n)).toBe('11 GB');
    expect(humanizeBytes(1500n)).toBe('1.5 kB');
  });
});
