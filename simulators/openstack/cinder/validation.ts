/**
 * Cinder's request validation texts: jsonschema failures as
 * `Invalid input for field/attribute <f>. Value: <str(v)>. <jsonschema message>` and the older
 * `Missing required element` checks.
 */
import { ApiError } from '../http/fault';
import { pyBool, pyBoolEnumText, pyRepr, pyStr } from '../pyjson';
import { asObject } from './context';

export function schemaError(field: string, value: unknown, message: string): ApiError {
  return new ApiError(400, `Invalid input for field/attribute ${field}. Value: ${pyStr(value)}. ${message}`);
}

/** The body's top-level object `key`, or 400 `Missing required element '<key>' in request body.` */
export function requireElement(body: unknown, key: string): Record<string, unknown> {
  const o = asObject(asObject(body)?.[key]);
  if (!o) throw new ApiError(400, `Missing required element '${key}' in request body.`);
  return o;
}

export function requireProperty(container: string, obj: Record<string, unknown>, key: string): unknown {
  if (!(key in obj)) throw schemaError(container, obj, `${pyRepr(key)} is a required property`);
  return obj[key];
}

/** Cinder's size type: an integer ≥ 1 or a string of digits. */
export function sizeValue(field: string, v: unknown): number {
  if (typeof v === 'number' && Number.isInteger(v)) {
    if (v < 1) throw schemaError(field, v, `${v} is less than the minimum of 1`);
    return v;
  }
  if (typeof v === 'string') {
    if (!/^[0-9]+$/.test(v)) throw schemaError(field, v, `${pyRepr(v)} does not match '^[0-9]+$'`);
    const n = Number(v);
    if (n < 1) throw schemaError(field, v, `${pyRepr(v)} is less than the minimum of 1`);
    return n;
  }
  throw schemaError(field, v, `${pyRepr(v)} is not of type 'integer', 'string'`);
}

/** Cinder's boolean parameter type (strict bool_from_string spellings). */
export function boolValue(field: string, v: unknown): boolean {
  const b = typeof v === 'boolean' || typeof v === 'string' ? pyBool(v) : undefined;
  if (b === undefined) throw schemaError(field, v, `${pyRepr(v)} is not one of ${pyBoolEnumText()}`);
  return b;
}

export function stringOrNull(field: string, v: unknown, max = 255): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') throw schemaError(field, v, `${pyRepr(v)} is not of type 'string', 'null'`);
  if (v.length > max) throw schemaError(field, v, `${pyRepr(v)} is too long`);
  return v;
}

/** A metadata object of strings. */
export function metadataValue(field: string, v: unknown): Record<string, string> {
  const o = asObject(v);
  if (!o) throw schemaError(field, v, `${pyRepr(v)} is not of type 'object'`);
  for (const [k, val] of Object.entries(o)) {
    if (typeof val !== 'string') throw schemaError(k, val, `${pyRepr(val)} is not of type 'string'`);
    if (k.length === 0 || k.length > 255)
      throw schemaError(field, o, `${pyRepr(k)} does not match any of the regexes: '^[a-zA-Z0-9-_:. /]{1,255}$'`);
  }
  return { ...(o as Record<string, string>) };
}

/** jsonschema `additionalProperties: false`. */
export function noExtraKeys(field: string, obj: Record<string, unknown>, allowed: readonly string[]): void {
  const extra = Object.keys(obj).filter((k) => !allowed.includes(k));
  if (extra.length === 0) return;
  const list = extra.map(pyRepr).join(', ');
  throw schemaError(
    field,
    obj,
    `Additional properties are not allowed (${list} ${extra.length === 1 ? 'was' : 'were'} unexpected)`,
  );
}
