/** Deeper than any request the API defines (about 5 levels), far shallower than what exhausts a call stack. */
export const MAX_JSON_DEPTH = 64;

/**
 * JSON.parse, refusing documents nested deeper than MAX_JSON_DEPTH: JSON.parse takes 100,000 levels in its stride, but
 * everything after it that walks a value recursively (validation, an error that shows the value back, serialising the
 * answer) overflows the stack on them. Throws a SyntaxError, as for text that is not JSON.
 */
export function parseJsonText(text: string): unknown {
  const value: unknown = JSON.parse(text);
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > MAX_JSON_DEPTH) throw new SyntaxError(`it is nested more than ${MAX_JSON_DEPTH} levels deep`);
    for (const child of Array.isArray(node) ? node : Object.values(node)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return value;
}
