/**
 * Where a process's CPU went, from a V8 CPU profile (`node --cpu-prof`): the self time of every
 * sampled function, added up per package (`node_modules/<name>`), per folder of the project
 * (`src/services/reservations`, `src/lib`…), Node's own code (`node:*`) and V8's pseudo-frames
 * (garbage collection, the program outside JavaScript). Idle time is kept apart: shares are of the
 * time the process was busy.
 */

/** The parts of a `.cpuprofile` this reads (V8's Profiler.Profile, as Node writes it). */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string } }>;
  samples: number[];
  /** Microseconds since the previous sample; the first since the profile's start. */
  timeDeltas: number[];
}

export interface CpuShare {
  group: string;
  ms: number;
  /** Of the busy time (everything but idle), 0–100. */
  percent: number;
}

export interface CpuSummary {
  busyMs: number;
  idleMs: number;
  groups: CpuShare[];
}

/** The folders of the project whose time is reported apart (deeper ones count toward the first that matches). */
const projectFolderDepth: Record<string, number> = { src: 2, 'src/services': 3, workers: 1, bench: 1, test: 1 };

/**
 * The group a frame's time counts toward. `url`: the script's URL (`file:///…`, `node:…`, or empty
 * for V8's own frames); `root`: the project's directory, so that its files are named by folder.
 */
export function groupOfFrame(functionName: string, url: string, root: string): string {
  if (!url) {
    if (functionName === '(garbage collector)') return 'garbage collection';
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(program)') return 'program (outside JavaScript)';
    return 'V8 builtins';
  }
  if (url.startsWith('node:')) return 'node internals';
  const path = decodeURIComponent(url.replace(/^file:\/\//, ''));
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [scope, name] = path.slice(modules + '/node_modules/'.length).split('/');
    return scope.startsWith('@') ? `${scope}/${name}` : scope;
  }
  const prefix = root.endsWith('/') ? root : `${root}/`;
  if (!path.startsWith(prefix)) return 'other scripts';
  const parts = path.slice(prefix.length).split('/').slice(0, -1);
  let depth = 1;
  for (let d = 1; d <= parts.length; d++) depth = projectFolderDepth[parts.slice(0, d).join('/')] ?? depth;
  return parts.slice(0, Math.min(depth, parts.length)).join('/') || '(project root)';
}

/** The self time of `profile` per group, largest first. */
export function summariseCpuProfile(profile: CpuProfile, root: string): CpuSummary {
  const groupOfNode = new Map(profile.nodes.map((n) => [n.id, groupOfFrame(n.callFrame.functionName, n.callFrame.url, root)]));
  const micros = new Map<string, number>();
  profile.samples.forEach((nodeId, i) => {
    const group = groupOfNode.get(nodeId) ?? 'other scripts';
    // A sample's time is the delta to the next one: the function was running until then.
    const delta = profile.timeDeltas[i + 1] ?? 0;
    micros.set(group, (micros.get(group) ?? 0) + delta);
  });
  const idleMs = (micros.get('idle') ?? 0) / 1000;
  micros.delete('idle');
  const busyMs = [...micros.values()].reduce((a, b) => a + b, 0) / 1000;
  const groups = [...micros]
    .map(([group, us]) => ({ group, ms: us / 1000, percent: busyMs ? (us / 1000 / busyMs) * 100 : 0 }))
    .sort((a, b) => b.ms - a.ms);
  return { busyMs, idleMs, groups };
}

/** Adds up summaries (the profiles of several processes of one role). */
export function mergeCpuSummaries(summaries: CpuSummary[]): CpuSummary {
  const ms = new Map<string, number>();
  for (const s of summaries) for (const g of s.groups) ms.set(g.group, (ms.get(g.group) ?? 0) + g.ms);
  const busyMs = summaries.reduce((a, s) => a + s.busyMs, 0);
  const groups = [...ms].map(([group, t]) => ({ group, ms: t, percent: busyMs ? (t * 100) / busyMs : 0 })).sort((a, b) => b.ms - a.ms);
  return { busyMs, idleMs: summaries.reduce((a, s) => a + s.idleMs, 0), groups };
}
