/** Module → the modules it imports (repository-relative paths, or package names). */
export type ImportGraph = Map<string, Set<string>>;

export interface LayerRule {
  layer: string;
  mayNotImport: string[];
}

/** `<module> imports <target>` for every import a rule forbids (a prefix of a path, or a package name). */
export function findLayerViolations(graph: ImportGraph, rules: readonly LayerRule[]): string[] {
  const violations: string[] = [];
  for (const [from, targets] of graph) {
    const rule = rules.find((r) => from.startsWith(r.layer));
    if (!rule) continue;
    for (const target of targets) {
      if (rule.mayNotImport.some((forbidden) => target === forbidden || target.startsWith(forbidden)))
        violations.push(`${from} imports ${target}`);
    }
  }
  return violations.sort();
}

/** The strongly connected components of more than one module (Tarjan), each sorted: the import cycles. */
export function findImportCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node)?.has(node)) cycles.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles.sort((a, b) => a[0].localeCompare(b[0]));
}
