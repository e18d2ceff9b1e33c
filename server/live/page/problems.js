/**
 * The live page's problems panel (browser only, bundled with main.js): the volume doctor's open
 * problems, listed over HTTP (`volumeProblems`) and kept current from `volumeProblemChanged`
 * (OPENED/UPDATED replace, RESOLVED removes). Each shows its remedies, and a remedy with a
 * mutation links to GraphiQL with that document and its variables filled in (`?query=&variables=`).
 */

const el = (tag, className, text) => {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
};

/** GraphiQL at `endpointPath`, opening a tab with `mutation`'s document and variables. */
export function remedyHref(endpointPath, mutation) {
  const q = new URLSearchParams({ query: mutation.document, variables: mutation.variables });
  return `${endpointPath}?${q}`;
}

export class ProblemsPanel {
  /** @param list the `<ul>` to render into; @param count where the count goes; @param endpointPath GraphiQL's path */
  constructor(list, count, endpointPath) {
    this.list = list;
    this.count = count;
    this.endpointPath = endpointPath;
    /** Problem id → problem. */
    this.open = new Map();
  }

  /** A fresh list (`volumeProblems` nodes). */
  replace(nodes) {
    this.open = new Map(nodes.map((p) => [p.id, p]));
    this.render();
  }

  /** One `volumeProblemChanged` event. */
  apply(event) {
    if (!event?.problem) return;
    if (event.type === 'RESOLVED') this.open.delete(event.problem.id);
    else this.open.set(event.problem.id, event.problem);
    this.render();
  }

  render() {
    const items = [...this.open.values()].map((p) => this.item(p));
    this.list.replaceChildren(...items);
    if (items.length === 0) this.list.append(el('li', 'none', 'No open problems.'));
    this.count.textContent = `(${this.open.size})`;
  }

  item(p) {
    const li = el('li', 'problem');
    li.dataset.problemId = p.id;
    li.dataset.kind = p.kind;
    li.dataset.severity = p.severity;
    const head = el('div', 'problem-head');
    const badge = el('span', 'badge severity', p.severity);
    badge.dataset.state = p.severity;
    head.append(
      badge,
      el('strong', 'kind', p.kind),
      el('span', 'where', ` ${p.backend.id} · ${p.volume?.name ?? p.volumeId}`),
    );
    li.append(head, el('p', 'summary', p.summary));
    const remedies = el('ol', 'remedies');
    for (const r of p.remedies) {
      const ri = el('li', 'remedy');
      ri.dataset.action = r.action;
      ri.append(el('strong', '', r.action), el('span', 'who', ` (${r.who}) `), el('span', 'does', r.does));
      if (r.mutation) {
        const a = el('a', 'open-graphiql', 'Open in GraphiQL');
        a.href = remedyHref(this.endpointPath, r.mutation);
        a.target = '_blank';
        a.rel = 'noopener';
        ri.append(' ', a);
      }
      if (r.cli) ri.append(el('code', 'cli', r.cli));
      remedies.append(ri);
    }
    li.append(remedies);
    return li;
  }
}
