/**
 * Finds the two object-literal shapes that V8 on Node 20 keeps through young-generation GCs until
 * a full one (docs/architecture.md, "Allocation on the hot path"), for test/hot-path-shapes.test.ts:
 * - an accessor (`get x() {}` / `set x(v) {}`) in an object literal: each such literal gets a hidden
 *   class of its own in old space, and its closures keep what they capture alive;
 * - a field added after a spread (`{ ...base, extra }` where `base` has no `extra`). Overriding a
 *   field the spread already has is harmless, so the type checker tells the two apart.
 */
import ts from 'typescript';
import { join } from 'node:path';
import { root } from './source-imports';

/** One literal of a banned shape: where, and which rule. */
export interface ShapeFinding {
  file: string;
  line: number;
  rule: 'accessor' | 'field-after-spread';
  /** The accessor's name, or the fields added after the spread. */
  names: string[];
}

/** Accessors in object literals of one source text (no types needed). */
export function literalAccessors(file: string, text: string): ShapeFinding[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const out: ShapeFinding[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isObjectLiteralExpression(n)) {
      for (const p of n.properties) {
        if (ts.isGetAccessorDeclaration(p) || ts.isSetAccessorDeclaration(p))
          out.push({
            file,
            line: sf.getLineAndCharacterOfPosition(p.getStart()).line + 1,
            rule: 'accessor',
            names: [p.name.getText(sf)],
          });
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

const nameOf = (p: ts.ObjectLiteralElementLike, sf: ts.SourceFile): string | undefined =>
  (ts.isPropertyAssignment(p) || ts.isShorthandPropertyAssignment(p) || ts.isMethodDeclaration(p)) &&
  !ts.isComputedPropertyName(p.name)
    ? p.name.getText(sf).replace(/^['"]|['"]$/g, '')
    : undefined;

/** Fields added after a spread, in `files` (repo-relative), with the project's compiler options. */
export function fieldsAfterSpread(files: readonly string[]): ShapeFinding[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  const program = ts.createProgram(
    files.map((f) => join(root, f)),
    { ...config!.options, noEmit: true, skipLibCheck: true },
  );
  const checker = program.getTypeChecker();
  const out: ShapeFinding[] = [];
  for (const file of files) {
    const sf = program.getSourceFile(join(root, file))!;
    const visit = (n: ts.Node): void => {
      if (ts.isObjectLiteralExpression(n)) {
        const spreads: ts.Type[] = [];
        const added: string[] = [];
        for (const p of n.properties) {
          if (ts.isSpreadAssignment(p)) {
            spreads.push(checker.getTypeAtLocation(p.expression));
            continue;
          }
          const name = nameOf(p, sf);
          if (spreads.length === 0) continue;
          // A computed or unknown name cannot be checked: counted as added.
          if (
            name === undefined ||
            !spreads.some((t) => checker.getPropertyOfType(checker.getApparentType(t), name) !== undefined)
          )
            added.push(name ?? '[computed]');
        }
        if (added.length > 0)
          out.push({
            file,
            line: sf.getLineAndCharacterOfPosition(n.getStart()).line + 1,
            rule: 'field-after-spread',
            names: added,
          });
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return out;
}
