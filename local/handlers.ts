import path from 'node:path';

const FUNCTIONS_DIR = path.resolve(__dirname, '../functions');
const cache = new Map<string, (...args: any[]) => Promise<any>>();

/** The handler a reference "<file under functions/>#<export>" names, as Lambda would load it. */
export function loadHandler<T extends (...args: any[]) => Promise<any>>(ref: string): T {
  let fn = cache.get(ref);
  if (!fn) {
    const [file, name] = ref.split('#');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    fn = require(path.join(FUNCTIONS_DIR, file))[name];
    if (typeof fn !== 'function') throw new Error(`handler ${ref} does not exist`);
    cache.set(ref, fn);
  }
  return fn as T;
}
