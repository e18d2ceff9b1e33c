/**
 * The published layout: a type's parts may be split across SDL files (the core's definition, a
 * backend's `extend` in schema/<backend>/), but the printed subgraph SDL keeps what was published
 * where it was published. printSubgraphSchema prints each type's definition and extensions as
 * separate blocks, in the order of the document, so moving a field or union member from the core to
 * a backend's file would move it in the printed schema (and in introspection) although nothing
 * changed. This module re-lays the document out as the published SDL has it: types in published
 * order, each block (definition or extension) with the fields, values or members the published block
 * has, in its order. What the published SDL lacks (a new field, a new type) keeps the document's
 * order after it, so schema:check still sees every change. Content (descriptions, types, arguments,
 * directives) always comes from the document, never from the published SDL.
 */
import { Kind, type DefinitionNode, type DocumentNode } from 'graphql';

/** A named part of a type: a field, input field, enum value or union member. */
interface Part {
  name: { value: string };
}

type TypeNode = Extract<DefinitionNode, { name: { value: string } }> & { kind: Kind };

const EXTENSION_OF: Partial<Record<Kind, Kind>> = {
  [Kind.OBJECT_TYPE_DEFINITION]: Kind.OBJECT_TYPE_EXTENSION,
  [Kind.INTERFACE_TYPE_DEFINITION]: Kind.INTERFACE_TYPE_EXTENSION,
  [Kind.INPUT_OBJECT_TYPE_DEFINITION]: Kind.INPUT_OBJECT_TYPE_EXTENSION,
  [Kind.ENUM_TYPE_DEFINITION]: Kind.ENUM_TYPE_EXTENSION,
  [Kind.UNION_TYPE_DEFINITION]: Kind.UNION_TYPE_EXTENSION,
  [Kind.SCALAR_TYPE_DEFINITION]: Kind.SCALAR_TYPE_EXTENSION,
};
const DEFINITIONS = new Set(Object.keys(EXTENSION_OF));
const EXTENSIONS = new Set(Object.values(EXTENSION_OF));

const isType = (d: DefinitionNode): d is TypeNode => DEFINITIONS.has(d.kind) || EXTENSIONS.has(d.kind);
const isDefinition = (d: TypeNode): boolean => DEFINITIONS.has(d.kind);

/** The key under which a node of this kind holds its parts (fields, values, union members). */
function partsKey(d: TypeNode): 'fields' | 'values' | 'types' | undefined {
  if (d.kind === Kind.ENUM_TYPE_DEFINITION || d.kind === Kind.ENUM_TYPE_EXTENSION) return 'values';
  if (d.kind === Kind.UNION_TYPE_DEFINITION || d.kind === Kind.UNION_TYPE_EXTENSION) return 'types';
  if (d.kind === Kind.SCALAR_TYPE_DEFINITION || d.kind === Kind.SCALAR_TYPE_EXTENSION) return undefined;
  return 'fields';
}

const partsOf = (d: TypeNode): readonly Part[] => {
  const key = partsKey(d);
  return key ? ((d as unknown as Record<string, readonly Part[] | undefined>)[key] ?? []) : [];
};
const withParts = (d: TypeNode, parts: readonly Part[]): TypeNode => {
  const key = partsKey(d);
  return key ? { ...d, [key]: parts } : d;
};

/** The type nodes of a document, grouped by type name in order of first appearance. */
function byType(doc: DocumentNode): Map<string, TypeNode[]> {
  const out = new Map<string, TypeNode[]>();
  for (const d of doc.definitions) if (isType(d)) out.set(d.name.value, [...(out.get(d.name.value) ?? []), d]);
  return out;
}

/** One type's nodes laid out as the published ones: same blocks, same part order, unpublished parts after. */
function layOutType(nodes: TypeNode[], published: TypeNode[]): TypeNode[] {
  const pool = new Map<string, Part>(nodes.flatMap((n) => partsOf(n).map((p): [string, Part] => [p.name.value, p])));
  const origin = new Map<string, TypeNode>(
    nodes.flatMap((n) => partsOf(n).map((p): [string, TypeNode] => [p.name.value, n])),
  );
  const definition = nodes.find(isDefinition);
  // An extension's directives go out once, on the first block that takes one of its parts.
  const directivesPlaced = new Set<TypeNode>();
  const out: TypeNode[] = [];
  for (const block of published) {
    const parts = partsOf(block).flatMap((p) => {
      const part = pool.get(p.name.value);
      pool.delete(p.name.value);
      return part ? [part] : [];
    });
    if (isDefinition(block)) {
      if (definition) out.push(withParts(definition, parts));
      continue;
    }
    const from = parts.length > 0 ? origin.get(parts[0]!.name.value) : undefined;
    if (!from) continue;
    const directives =
      !isDefinition(from) && !directivesPlaced.has(from) ? (directivesPlaced.add(from), from.directives ?? []) : [];
    out.push(withParts({ kind: EXTENSION_OF[from.kind] ?? from.kind, name: from.name, directives } as TypeNode, parts));
  }
  // A definition the published SDL did not have (a type that was only extended there) comes first.
  if (definition && !out.some(isDefinition)) out.unshift(withParts(definition, []));
  // Directives of an extension none of whose parts was published: on an extension of their own.
  for (const n of nodes)
    if (
      !isDefinition(n) &&
      !directivesPlaced.has(n) &&
      (n.directives?.length ?? 0) > 0 &&
      partsOf(n).every((p) => !pool.has(p.name.value))
    )
      out.push(withParts(n, []));
  // Parts the published SDL lacks: where the document has them.
  for (const n of nodes) {
    const fresh = partsOf(n).filter((p) => pool.has(p.name.value));
    if (fresh.length === 0) continue;
    const at = isDefinition(n) ? out.findIndex(isDefinition) : -1;
    if (at >= 0) out[at] = withParts(out[at]!, [...partsOf(out[at]!), ...fresh]);
    else out.push(withParts({ ...n, directives: directivesPlaced.has(n) ? [] : n.directives } as TypeNode, fresh));
  }
  return out;
}

/**
 * `doc` laid out as `published` prints it (see the module's comment). Definitions that are not types
 * (`extend schema`, directives) come first, as the printer puts them anyway.
 */
export function layOutAsPublished(doc: DocumentNode, published: DocumentNode): DocumentNode {
  const current = byType(doc);
  const before = byType(published);
  const order = [
    ...[...before.keys()].filter((n) => current.has(n)),
    ...[...current.keys()].filter((n) => !before.has(n)),
  ];
  const types = order.flatMap((name) =>
    before.has(name) ? layOutType(current.get(name)!, before.get(name)!) : current.get(name)!,
  );
  return { ...doc, definitions: [...doc.definitions.filter((d) => !isType(d)), ...types] };
}
