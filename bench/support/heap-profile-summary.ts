import { groupOfFrame } from './cpu-profile-summary.js';

/**
 * What a process allocated, from a V8 sampling heap profile taken with the objects that garbage
 * collection has freed kept in it (bench/support/sample-allocations.ts): the bytes of the sampled
 * allocations of every function, added up per package, per folder of the project and Node's own
 * code (groupOfFrame). Allocation, not what stays alive: what makes garbage collection run.
 */

/** The parts of a `.heapprofile` this reads (V8's HeapProfiler.SamplingHeapProfile). */
export interface HeapProfileNode {
  callFrame: { functionName: string; url: string };
  /** Bytes of the samples whose allocating function is this node's. */
  selfSize: number;
  children?: HeapProfileNode[];
}
export interface HeapProfile {
  head: HeapProfileNode;
}

export interface AllocationShare {
  group: string;
  bytes: number;
  /** Of everything sampled, 0–100. */
  percent: number;
}

export interface AllocationSummary {
  bytes: number;
  groups: AllocationShare[];
}

function sharesOf(bytesByGroup: Map<string, number>): AllocationSummary {
  const bytes = [...bytesByGroup.values()].reduce((a, b) => a + b, 0);
  const groups = [...bytesByGroup]
    .map(([group, b]) => ({ group, bytes: b, percent: bytes ? (b * 100) / bytes : 0 }))
    .filter((g) => g.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes);
  return { bytes, groups };
}

/** The sampled bytes of `profile` per group of the allocating function, largest first. */
export function summariseHeapProfile(profile: HeapProfile, root: string): AllocationSummary {
  const bytesByGroup = new Map<string, number>();
  // Iterative: a deep async stack would overflow a recursive walk.
  const pending = [profile.head];
  for (let node = pending.pop(); node; node = pending.pop()) {
    const { functionName, url } = node.callFrame;
    // V8's own root and pseudo-frames ("(root)", "(V8 API)") have no script.
    const group = url ? groupOfFrame(functionName, url, root) : 'V8 and native';
    bytesByGroup.set(group, (bytesByGroup.get(group) ?? 0) + node.selfSize);
    if (node.children) pending.push(...node.children);
  }
  return sharesOf(bytesByGroup);
}

/** Adds up summaries (the profiles of several processes of one role). */
export function mergeAllocationSummaries(summaries: AllocationSummary[]): AllocationSummary {
  const bytesByGroup = new Map<string, number>();
  for (const s of summaries) for (const g of s.groups) bytesByGroup.set(g.group, (bytesByGroup.get(g.group) ?? 0) + g.bytes);
  return sharesOf(bytesByGroup);
}
