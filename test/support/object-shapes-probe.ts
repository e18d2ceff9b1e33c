/** Sample literals for test/hot-path-shapes.test.ts: which fields after a spread are added (never imported). */
interface Base {
  a: number;
  b: string;
}
const base: Base = { a: 1, b: 'x' };
const key = 'k';

export const overridden = { ...base, a: 2 };
export const added = { ...base, a: 3, extra: true };
export const computed = { ...base, [key]: 1 };
export const spreadLast = { extra: true, ...base };
