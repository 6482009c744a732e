import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

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

/** The processes of `pids` still alive once they have all gone or `maxMs` has passed (a process may take a moment to exit). */
export async function stillAlive(pids: number[], maxMs = 20_000): Promise<number[]> {
  const until = Date.now() + maxMs;
  while (Date.now() < until && pids.some(alive)) await new Promise((r) => setTimeout(r, 100));
  return pids.filter(alive);
}

/** True while the process exists and has not exited (a zombie has). */
export function alive(pid: number): boolean {
  const stat = statOf(pid);
  return stat !== null && stat.state !== 'Z';
}

export interface NpmService {
  npm: ChildProcess;
  baseUrl: string;
  /** What the service wrote to stdout so far. */
  output(): string;
  /** What the service wrote to stderr so far. */
  errors(): string;
  /** Resolves with npm's exit code once it has exited. */
  exited: Promise<number | null>;
}

/** `npm start` in its own process, as a user runs it; resolves once it prints its URL. */
export async function startNpmService(env: NodeJS.ProcessEnv): Promise<NpmService> {
  const npm = spawn('npm', ['start'], { cwd: path.join(__dirname, '../..'), env: { ...process.env, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  let out = '';
  let errors = '';
  npm.stderr!.on('data', (chunk) => (errors += chunk));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start printed no URL: ${out}${errors}`)), 60_000);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited (${code}) before printing its URL: ${out}${errors}`));
    });
    npm.stdout!.on('data', (chunk) => {
      out += chunk;
      const m = /^PDF service listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  return { npm, baseUrl, output: () => out, errors: () => errors, exited };
}

/** What a crash does: every process of the service is gone at once, with nothing written on the way out. */
export function killTree(child: ChildProcess): number[] {
  const pids = child.pid ? [child.pid, ...descendants(child.pid)] : [];
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  return pids;
}
