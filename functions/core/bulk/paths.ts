/**
 * Paths inside a bundle: the rules for paths a request names (`files[].path`, multipart `paths`) and for
 * ZIP entry names, and the output names that mirror them.
 */
import { ServiceError } from '../errors';
import { type BundleType, CONVERTIBLE_EXTENSIONS } from './limits';

const MAX_PATH_LENGTH = 1024;

export type PathProblem = 'empty' | 'absolute' | 'parent_reference' | 'backslash' | 'control_character' | 'too_long' | 'directory';

/** Why a bundle path is not acceptable, or null when it is. `.` and empty segments are not problems (they normalise away). */
export function pathProblem(path: string): PathProblem | null {
  if (path.split('/').every((s) => s === '' || s === '.')) return 'empty';
  if (path.length > MAX_PATH_LENGTH) return 'too_long';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'control_character';
  if (path.includes('\\')) return 'backslash';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'absolute';
  if (path.split('/').includes('..')) return 'parent_reference';
  return null;
}

/** `./a//b.html` → `a/b.html` (after `pathProblem` said it is acceptable). */
export function normalisePath(path: string): string {
  return path
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');
}

const PATH_MESSAGES: Record<PathProblem, string> = {
  empty: 'is empty',
  absolute: 'is absolute; paths are relative to the bundle root, e.g. "docs/intro.html"',
  parent_reference: 'contains ".."; paths may not leave the bundle',
  backslash: 'contains a backslash; separate folders with "/"',
  control_character: 'contains a control character',
  too_long: `is longer than ${MAX_PATH_LENGTH} characters`,
  directory: 'names a folder; name a file',
};

/** A path sent in the request (`files[i].path`, `paths[i]`): 400 INVALID_BULK_PATH, else the normalised path. */
export function requestPath(value: unknown, parameter: string): string {
  if (typeof value !== 'string') {
    throw new ServiceError('INVALID_BULK_PATH', `${parameter} must be a string: the file's path inside the bundle, e.g. "docs/intro.html".`, { parameter, reason: 'empty' });
  }
  const problem = pathProblem(value) ?? (value.endsWith('/') ? 'directory' : null);
  if (problem) {
    throw new ServiceError('INVALID_BULK_PATH', `${parameter} "${value.slice(0, 200)}" ${PATH_MESSAGES[problem]}.`, { parameter, path: value.slice(0, 200), reason: problem });
  }
  return normalisePath(value);
}

/** Entries a ZIP may carry but a bundle ignores: `__MACOSX/` folders, `._*` AppleDouble files, `.DS_Store`. */
export function isIgnoredEntry(path: string): boolean {
  const segments = path.split('/').filter(Boolean);
  if (segments.includes('__MACOSX')) return true;
  const name = segments[segments.length - 1] ?? '';
  return name.startsWith('._') || name === '.DS_Store';
}

/**
 * Output path of a converted file: the input path with its extension replaced by `.pdf` (`docs/a.html` →
 * `docs/a.pdf`). When two inputs would share an output (`a.html` and `a.htm`), the later one keeps its whole
 * name: `a.htm.pdf`; and should even that be taken, `-2`, `-3`, … are added before `.pdf`.
 */
export function outputPaths(inputs: readonly string[], bundleType: BundleType): string[] {
  const taken = new Set<string>();
  return inputs.map((input) => {
    const lower = input.toLowerCase();
    const ext = CONVERTIBLE_EXTENSIONS[bundleType].find((e) => lower.endsWith(e));
    const candidates = [`${ext ? input.slice(0, -ext.length) : input}.pdf`, `${input}.pdf`];
    let name = candidates.find((c) => !taken.has(c) && c !== 'manifest.json');
    for (let n = 2; !name; n++) if (!taken.has(`${input}-${n}.pdf`)) name = `${input}-${n}.pdf`;
    taken.add(name);
    return name;
  });
}
