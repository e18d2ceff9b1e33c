/**
 * Strings an attacker would try where the gateway expects an identifier, a name, a token or a
 * header value: path tricks, encodings, control characters, lone surrogates, non-Latin-1 text,
 * separators of Nomad's secrets header, and very long values. Each arbitrary mixes these with
 * plain values so that shrinking ends on the smallest string that still fails.
 */
import fc from 'fast-check';

/** Whole values that mean something to a URL, a path or a backend. */
export const PATH_TRICKS = [
  '.',
  '..',
  '...',
  './x',
  '../x',
  'x/..',
  '*',
  '%2F',
  '%2f',
  '%5C',
  '/',
  '\\',
  'a/b',
  'a%2Fb',
  '%2e',
  '%2e%2e',
  '.%2e',
  '?x=1',
  '#frag',
  '&namespace=*',
  'a b',
  ' a',
  'a ',
  '',
  '%',
  '%zz',
  '%00',
  '~',
  'null',
  'undefined',
  '__proto__',
  'constructor',
] as const;

/** Single characters that break parsers, headers or encoders. */
export const NASTY_CHARS = [
  '\uD800',
  '\uDFFF',
  '\uD83D',
  '\n',
  '\r',
  '\r\n',
  '\t',
  '\u0000',
  '\u0007',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\u00ff',
  '\u0100',
  '\u2028',
  '\u2029',
  '\u200b',
  '\ufeff',
  '\uffff',
  '💥',
  'é',
  'ß',
  'İ',
  '中',
  '"',
  "'",
  '`',
  '$',
  '{',
  '}',
  '\\',
  ',',
  '=',
  ';',
  ':',
] as const;

/** The values most likely to change a backend URL: tried far more often than the rest. */
export const SHORTLIST = ['.', '..', '*', '%2F', '/', '\uD800', 'a\nb', '💥'] as const;

const nastyChar = fc.constantFrom(...NASTY_CHARS);
const plainChar = fc.constantFrom(...'abcXYZ019-_.'.split(''));

/** A short string mixing plain and nasty characters. */
export const mixedString = (maxLength = 12): fc.Arbitrary<string> =>
  fc
    .array(fc.oneof({ weight: 3, arbitrary: plainChar }, { weight: 2, arbitrary: nastyChar }), { maxLength })
    .map((cs) => cs.join(''));

/** A long string: `size` repetitions of a short unit (long ids, tokens, bodies near the limits). */
export const longString = (maxSize: number): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.oneof(fc.constant('a'), fc.constant('é'), fc.constant('💥'), fc.constant('../'), mixedString(4)),
      fc.integer({ min: 1, max: maxSize }),
    )
    .map(([unit, n]) => unit.repeat(n));

/**
 * A hostile value for an identifier position (native id, namespace, plugin, node, scope…),
 * built around the real `names` so that some of them reach the backend.
 */
export function hostileIdentifier(names: readonly string[], maxLong = 2_000): fc.Arbitrary<string> {
  const real = fc.constantFrom(...names);
  return fc.oneof(
    { weight: 3, arbitrary: real },
    { weight: 5, arbitrary: fc.constantFrom(...SHORTLIST) },
    { weight: 2, arbitrary: fc.constantFrom(...PATH_TRICKS) },
    {
      weight: 2,
      arbitrary: fc.tuple(real, fc.constantFrom(...SHORTLIST, ...PATH_TRICKS, ...NASTY_CHARS)).map(([n, t]) => n + t),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom(...SHORTLIST, ...PATH_TRICKS, ...NASTY_CHARS), real).map(([t, n]) => t + n),
    },
    { weight: 2, arbitrary: mixedString() },
    { weight: 1, arbitrary: longString(maxLong) },
  );
}

/** Free text (names, descriptions, secret values, filter strings). */
export function hostileText(names: readonly string[], maxLong = 20_000): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 2, arbitrary: hostileIdentifier(names, 200) },
    { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '" || true',
        'PluginID != ""',
        ') or (1 == 1',
        '${jndi:x}',
        '<script>',
        'a,b=c',
        'k=v,x',
      ),
    },
    { weight: 1, arbitrary: longString(maxLong) },
  );
}

/** A header value: real tokens, tokens with junk around them, controls, non-Latin-1, very long. */
export function hostileHeaderValue(tokens: readonly string[]): fc.Arbitrary<string> {
  const token = fc.constantFrom(...tokens);
  return fc.oneof(
    { weight: 2, arbitrary: token },
    { weight: 2, arbitrary: fc.tuple(token, nastyChar).map(([t, c]) => t + c) },
    { weight: 2, arbitrary: fc.tuple(nastyChar, token).map(([c, t]) => c + t) },
    { weight: 2, arbitrary: mixedString(16) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', 'Bearer x', 'null', '*', '../admin') },
    { weight: 1, arbitrary: longString(20_000) },
  );
}
