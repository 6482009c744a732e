/**
 * Paths inside a bundle: the rules for paths a request names (`files[].path`, multipart `paths`) and for
 * ZIP entry names, and the output names that mirror them.
 */
import { ServiceError } from '../errors';
import { windowsSafeName } from '../pdf/filenames';
import { DISPLAY_CONTROLS } from '../validation/display-controls';
import { type BundleType, CONVERTIBLE_EXTENSIONS } from './limits';

const MAX_PATH_LENGTH = 1024;
const CONTROL_CHARACTER = new RegExp(`[\\p{Cc}${DISPLAY_CONTROLS}]`, 'u');
/** Half of a surrogate pair: no character at all, written to the ZIP as U+FFFD (so `\ud800.html` and `\udbff.html` collide). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export type PathProblem = 'empty' | 'absolute' | 'parent_reference' | 'backslash' | 'control_character' | 'lone_surrogate' | 'too_long' | 'directory';

/** Why a bundle path is not acceptable, or null when it is. `.` and empty segments are not problems (they normalise away). */
export function pathProblem(path: string): PathProblem | null {
  if (path.split('/').every((s) => s === '' || s === '.')) return 'empty';
  if (path.length > MAX_PATH_LENGTH) return 'too_long';
  // Every control character: C0, DEL and C1 (U+0080–U+009F, e.g. U+009B, a terminal's escape introducer), and the
  // display controls (bidirectional overrides, line separators).
  if (CONTROL_CHARACTER.test(path)) return 'control_character';
  if (LONE_SURROGATE.test(path)) return 'lone_surrogate';
  if (path.includes('\\')) return 'backslash';
  // The drive letter is looked for where normalising leaves the path's start: `./C:/x` is `C:/x`.
  if (path.startsWith('/') || /^[A-Za-z]:/.test(normalisePath(path))) return 'absolute';
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
  lone_surrogate: 'contains half of a surrogate pair (\\uD800–\\uDFFF alone), which is no character',
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

const MANIFEST = 'manifest.json';

/**
 * Output path of a converted file: the input path with its extension replaced by `.pdf` (`docs/a.html` →
 * `docs/a.pdf`). When two inputs would share an output (`a.html` and `a.htm`), the later one keeps its whole
 * name: `a.htm.pdf`; and should even that be taken, `-2`, `-3`, … are added before `.pdf`. A name is also taken
 * when it is a folder of another output (`x.pdf` beside `x.pdf/y.pdf`): an archive holding both cannot be unzipped.
 * So is `manifest.json`; a top-level folder of that name becomes `_manifest.json/`, beside the manifest.
 * Names are compared as the file systems of macOS and Windows do, ignoring case and Unicode normalisation: `A.pdf`
 * beside `a.pdf` would overwrite each other when unzipped there, so the later one is `a.html.pdf`. Names Windows
 * cannot create are changed (see `windowsSafe`).
 */
export function outputPaths(inputs: readonly string[], bundleType: BundleType): string[] {
  const mirrored = inputs.map((input) => windowsSafe(input.split('/')[0].toLowerCase() === MANIFEST ? `_${input}` : input));
  const taken = new Set<string>([MANIFEST]);
  const isTaken = (path: string) => taken.has(sameFileKey(path));
  const take = (path: string) => taken.add(sameFileKey(path));
  for (const path of mirrored) {
    const segments = path.split('/');
    for (let i = 1; i < segments.length; i++) take(segments.slice(0, i).join('/'));
  }
  return mirrored.map((input) => {
    const lower = input.toLowerCase();
    const ext = CONVERTIBLE_EXTENSIONS[bundleType].find((e) => lower.endsWith(e));
    const candidates = [`${ext ? input.slice(0, -ext.length) : input}.pdf`, `${input}.pdf`];
    let name = candidates.find((c) => !isTaken(c));
    for (let n = 2; !name; n++) if (!isTaken(`${input}-${n}.pdf`)) name = `${input}-${n}.pdf`;
    take(name);
    return name;
  });
}

const WINDOWS_FORBIDDEN = /[<>:"|?*]/g;

/**
 * A path every common file system can hold, segment by segment: `<>:"|?*` become `_` (a `:` would write an NTFS
 * alternate stream), device names get a `_` prefix (`NUL.html` → `_NUL.html`), and trailing dots and spaces, which
 * Windows drops, become `_`. Unchanged for any other path.
 */
function windowsSafe(path: string): string {
  return path
    .split('/')
    .map((segment) => windowsSafeName(segment.replace(WINDOWS_FORBIDDEN, '_').replace(/[. ]+$/, '_')))
    .join('/');
}

/** Paths that name the same file on a case-insensitive, normalisation-insensitive file system share this key. */
function sameFileKey(path: string): string {
  return path.normalize('NFC').toLowerCase();
}
