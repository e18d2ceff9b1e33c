/**
 * What the live path needs to know of a backend's volume details without knowing the backend:
 * which of their fields only stamp a write or mirror another field (a write index, claim counts
 * that attachments report, the backend's own status word). Each backend's `model.ts` declares
 * them for its details type when it is loaded; events/diff.ts never makes a change of them alone.
 */

const CARRIED = new Map<string, readonly string[]>();

/**
 * Declares the carried fields of the details type `typename` (its `__typename`).
 * @throws Error when another list was declared for it (two folders claiming one type)
 */
export function defineCarriedDetails(typename: string, fields: readonly string[]): void {
  const known = CARRIED.get(typename);
  if (known && known.join() !== fields.join())
    throw new Error(`details type ${typename} has two lists of carried fields`);
  CARRIED.set(typename, fields);
}

/** The carried fields of details of type `typename`; none when its backend declared none. */
export const carriedDetails = (typename: string): readonly string[] => CARRIED.get(typename) ?? [];
