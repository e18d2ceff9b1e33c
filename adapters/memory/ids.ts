/**
 * The memory backend's identifier rules: the shared ones (`contract/input.ts`) plus a namespace
 * shape, so that its ids read like the other backends' and a typo is refused before any lookup.
 */
import { defineIdentifierScheme, type IdentifierScheme } from '../contract/ids';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The memory backend's identifier scheme; snapshots are scoped by namespace, like volumes. */
export const MEMORY_IDENTIFIERS: IdentifierScheme = {
  rules: {
    namespace: {
      test: (v) => NAME.test(v),
      expects: 'a memory namespace (1–128 letters, digits, ".", "_" and "-", starting with a letter or digit)',
    },
    volume: {
      test: (v) => NAME.test(v),
      expects: 'a memory volume id (1–128 letters, digits, ".", "_" and "-", starting with a letter or digit)',
    },
    snapshot: {
      test: (v) => NAME.test(v),
      expects: 'a memory snapshot id (1–128 letters, digits, ".", "_" and "-", starting with a letter or digit)',
    },
    attachment: {
      test: (v) => NAME.test(v),
      expects: 'a memory attachment id (1–128 letters, digits, ".", "_" and "-", starting with a letter or digit)',
    },
    consumer: {
      test: (v) => NAME.test(v),
      expects: 'a memory attachment id (1–128 letters, digits, ".", "_" and "-", starting with a letter or digit)',
    },
  },
  snapshotScope: 'namespace',
};

defineIdentifierScheme('MEMORY', MEMORY_IDENTIFIERS);
