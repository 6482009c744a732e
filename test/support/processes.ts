import { readFileSync, readdirSync } from 'node:fs';

/** A process's state letter and parent from /proc/<pid>/stat, or null once it is gone. */
function statOf(pid: number): { state: string; parent: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], parent: Number(fields[1]) };
  } catch {
    return null;
  }
}

/** Live processes below `root` now (found through /proc, so they are known even if they outlive their parent later). */
export function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = statOf(Number(entry));
    if (stat && stat.state !== 'Z') parentOf.set(Number(entry), stat.parent);
  }
  const below = (pid: number): boolean => {
    for (let p = parentOf.get(pid); p; p = parentOf.get(p)) if (p === root) return true;
    return false;
  };
  return [...parentOf.keys()].filter(below);
}

/** True while the process exists and has not exited (a zombie has). */
export function alive(pid: number): boolean {
  const stat = statOf(pid);
  return stat !== null && stat.state !== 'Z';
}
