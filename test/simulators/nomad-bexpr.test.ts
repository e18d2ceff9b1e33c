/**
 * go-bexpr emulation: parse errors must be byte-for-byte what go-bexpr's pigeon parser reports
 * (cases from go-bexpr grammar/grammar_test.go), and evaluation must follow evaluate.go over the
 * stored volume struct.
 */
import {
  parseBexpr,
  evaluateBexpr,
  BexprParseError,
  BexprEvalError,
  BexprPanic,
  type Expr,
} from '../../simulators/nomad/bexpr';
import { volumeGoVal } from '../../simulators/nomad/reflect';
import type { CSIVolume } from '../../simulators/nomad/model';

function parseError(input: string): string {
  try {
    parseBexpr(input);
  } catch (e) {
    if (e instanceof BexprParseError) return e.message;
    throw e;
  }
  throw new Error(`expected a parse error for ${input}`);
}

describe('bexpr parser', () => {
  it.each([
    ['foo == "12x', '1:12 (11): rule "string": Unterminated string literal'],
    ['foo == `12x', '1:12 (11): rule "string": Unterminated string literal'],
    ['foo == 3x', '1:9 (8): rule "number": Invalid number literal'],
    ['foo[3] == abc', '1:5 (4): rule "index": Invalid index'],
    ['x in foo["abc"', '1:15 (14): rule "index": Unclosed index expression'],
    ['foo["abc" == 3', '1:11 (10): rule "index": Unclosed index expression'],
    ['x in 32', '1:6 (5): rule "match": Invalid selector'],
    ['32 == 32', '1:4 (3): no match found, expected: "in", "not" or [ \\t\\r\\n]'],
    ['32 is empty', '1:4 (3): no match found, expected: "in", "not" or [ \\t\\r\\n]'],
    ['x in foo abc', '1:10 (9): no match found, expected: "and", "or", [ \\t\\r\\n] or EOF'],
    [
      'x in foo and ',
      '1:14 (13): no match found, expected: "(", "-", "0", "\\"", "`", "not", [ \\t\\r\\n], [1-9] or [a-zA-Z]',
    ],
    [
      'x in foo or ',
      '1:13 (12): no match found, expected: "(", "-", "0", "\\"", "`", "not", [ \\t\\r\\n], [1-9] or [a-zA-Z]',
    ],
    [
      'x in foo or not ',
      '1:17 (16): no match found, expected: "!=", "(", "-", "0", "==", "\\"", "`", "contains", "in", "is", "matches", "not", [ \\t\\r\\n], [1-9] or [a-zA-Z]',
    ],
    ['(foo == 4', '1:10 (9): rule "grouping": Unmatched parentheses'],
    [
      '"/hy-phen/under_score/pi|pe/do.t/ti~lde/" == 3',
      '1:43 (42): no match found, expected: "in", "not" or [ \\t\\r\\n]',
    ],
  ])('rejects %s exactly like go-bexpr', (input, message) => {
    expect(parseError(input)).toBe(message);
  });

  it('parses the documented forms', () => {
    const m = (e: Expr): unknown => e;
    expect(m(parseBexpr('PluginID == "aws-ebs0"'))).toEqual({
      type: 'match',
      selector: { type: 'bexpr', path: ['PluginID'] },
      op: 'Equal',
      value: 'aws-ebs0',
    });
    expect(m(parseBexpr('Parameters["type"] == `gp3`'))).toMatchObject({
      selector: { path: ['Parameters', 'type'] },
      value: 'gp3',
    });
    expect(m(parseBexpr('Parameters.type != gp2'))).toMatchObject({ op: 'NotEqual', value: 'gp2' });
    expect(m(parseBexpr('"x" not in Secrets'))).toMatchObject({
      op: 'NotIn',
      selector: { path: ['Secrets'] },
      value: 'x',
    });
    expect(m(parseBexpr('Name not contains "tmp"'))).toMatchObject({ op: 'NotIn', value: 'tmp' });
    expect(m(parseBexpr('Topologies is not empty'))).toMatchObject({ op: 'IsNotEmpty', value: null });
    expect(m(parseBexpr('not not ID == a'))).toMatchObject({ type: 'match', op: 'Equal' });
    expect(m(parseBexpr('a == 1 or b == 2 and not c is empty'))).toMatchObject({
      type: 'or',
      right: { type: 'and', right: { type: 'not' } },
    });
    expect(m(parseBexpr('Capacity == -1.5'))).toMatchObject({ value: '-1.5' });
    expect(m(parseBexpr('Name == "a\\\\b"'))).toMatchObject({ value: 'a\\b' });
    expect(m(parseBexpr('Topologies.0.Segments.zone == x'))).toMatchObject({
      selector: { path: ['Topologies', '0', 'Segments', 'zone'] },
    });
  });

  it('treats \\" inside a double-quoted string as its end (go-bexpr has no quote escape)', () => {
    expect(() => parseBexpr('Name == "a\\"b"')).toThrow(BexprParseError);
  });
});

function volume(over: Partial<CSIVolume> = {}): CSIVolume {
  return {
    ID: 'vol1',
    Name: 'volume one',
    ExternalID: 'vol-abc',
    Namespace: 'default',
    RequestedTopologies: null,
    Topologies: [{ Segments: new Map([['zone', 'us-east-1a']]) }],
    AccessMode: 'single-node-writer',
    AttachmentMode: 'file-system',
    MountOptions: { FSType: 'ext4', MountFlags: ['noatime'] },
    Secrets: new Map([['token', 's3cr3t']]),
    Parameters: new Map([['type', 'gp3']]),
    Context: null,
    Capacity: 10737418240n,
    RequestedCapacityMin: 0n,
    RequestedCapacityMax: 0n,
    RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }],
    CloneID: '',
    SnapshotID: '',
    ReadAllocs: new Map(),
    WriteAllocs: new Map([['a1', null]]),
    ReadClaims: null,
    WriteClaims: null,
    PastClaims: null,
    Schedulable: false,
    PluginID: 'aws-ebs0',
    Provider: 'ebs.csi.aws.com',
    ProviderVersion: 'v1',
    ControllerRequired: true,
    ControllersHealthy: 0,
    ControllersExpected: 0,
    NodesHealthy: 0,
    NodesExpected: 0,
    ResourceExhausted: null,
    CreateIndex: 7,
    ModifyIndex: 9,
    CreateTime: 0n,
    ModifyTime: 1736191825846395400n,
    ...over,
  };
}

const ev = (expr: string, v = volume()): boolean => evaluateBexpr(parseBexpr(expr), volumeGoVal(v));

describe('bexpr evaluation against the stored volume', () => {
  it.each([
    ['PluginID == "aws-ebs0"', true],
    ['PluginID != "aws-ebs0"', false],
    ['Parameters["type"] == "gp3"', true],
    ['Parameters.type == gp2', false],
    ['Secrets.token == "s3cr3t"', true],
    ['"token" in Secrets', true],
    ['"nope" not in Secrets', true],
    ['"one" in Name', true],
    ['Name contains "two"', false],
    ['Name matches "^vol.*one$"', true],
    ['Name not matches "^x"', true],
    ['Topologies is not empty', true],
    ['Context is empty', true],
    ['ReadAllocs is empty and WriteAllocs is not empty', true],
    ['"a1" in WriteAllocs', true],
    ['"noatime" in MountOptions.MountFlags', true],
    ['Capacity == 10737418240', true],
    ['Capacity == "0x280000000"', true],
    ['Capacity == 0x1', 'parse-error'],
    ['CreateIndex == 7', true],
    ['ModifyTime == 1736191825846395400', true],
    ['Schedulable == false', true],
    ['Topologies.0.Segments.zone == "us-east-1a"', true],
    ['(PluginID == "x" or ID == vol1) and not Namespace == other', true],
    // A missing map key takes the operator's "not present" disposition.
    ['Parameters.iops == "3000"', false],
    ['Parameters.iops != "3000"', true],
    ['Parameters.iops is empty', true],
  ])('%s → %s', (expr, want) => {
    if (want === 'parse-error') expect(() => ev(expr)).toThrow(BexprParseError);
    else expect(ev(expr)).toBe(want);
  });

  it('reports runtime errors with go-bexpr/pointerstructure texts', () => {
    const err = (expr: string): string => {
      try {
        ev(expr);
      } catch (e) {
        if (e instanceof BexprEvalError) return e.message;
        throw e;
      }
      throw new Error('expected an error');
    };
    expect(err('Foo == "x"')).toBe(
      'error finding value in datum: /Foo at part 0: couldn\'t find key: struct field with name "Foo"',
    );
    expect(err('Capacity == "big"')).toBe(
      'error getting match value in expression: strconv.ParseInt: parsing "big": invalid syntax',
    );
    expect(err('Schedulable == yes')).toBe(
      'error getting match value in expression: strconv.ParseBool: parsing "yes": invalid syntax',
    );
    expect(err('Topologies == "x"')).toBe('unable to find suitable primitive comparison function for matching');
    expect(err('"x" in Capacity')).toBe(
      'error getting match value in expression: strconv.ParseInt: parsing "x": invalid syntax',
    );
    expect(err('"1" in Capacity')).toBe('Cannot perform in/contains operations on type int64 for selector: "Capacity"');
    expect(err('Capacity matches "1"')).toBe('Value of type int64 is not convertible to []byte');
    expect(err('Topologies.3.Segments.zone == x')).toBe(
      'error finding value in datum: /Topologies/3/Segments/zone at part 1: index 3 is out of range (length = 1)',
    );
    expect(err('Name.x == y')).toBe('error finding value in datum: /Name/x: at part 1, invalid value kind: string');
  });

  it('reports reflect panics separately', () => {
    expect(() => ev('Capacity is empty')).toThrow(BexprPanic);
    expect(() => ev('RequestedTopologies is empty')).toThrow(BexprPanic);
  });
});
