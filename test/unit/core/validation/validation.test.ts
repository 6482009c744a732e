import { z } from 'zod';
import { ServiceError } from '../../../../functions/core/errors';
import { base64Text, decodeBase64Text, decodedLength, isJsonObject, issueAt, issueUnder, jsonFormField, optional, parseRequest, queryInteger, refuse } from '../../../../functions/core/validation';
import { LABEL_PATTERN } from '../../../../functions/core/validation/label';
import { labelSchema } from '../../../../functions/core/validation';

function refusal(run: () => unknown): ServiceError {
  try {
    run();
  } catch (err) {
    if (err instanceof ServiceError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

const body = z
  .object({
    name: optional(z.string().trim().min(1).max(5)),
    size: optional(z.number().int().min(1)),
    tags: optional(z.array(z.enum(['a', 'b'])).min(1)),
    nested: optional(z.object({ depth: z.number() })),
    page: optional(queryInteger(1, 100)),
  })
  .superRefine((value, ctx) => {
    if (value.name === 'both' && value.size !== undefined) refuse(ctx, new ServiceError('CONFLICTING_FIELDS', 'name "both" takes no size'), { rank: -1 });
  });

describe('parseRequest', () => {
  it('returns the parsed value; absent and null both leave a field undefined', () => {
    expect(parseRequest(body, { name: ' ab ', size: null })).toEqual({ name: 'ab', size: undefined, tags: undefined, nested: undefined, page: undefined });
  });

  it('refuses a body that is not a JSON object, with the example', () => {
    for (const input of [null, [], 'x', 3]) {
      const err = refusal(() => parseRequest(body, input, { example: '{"name": "x"}' }));
      expect(err.code).toBe('INVALID_PARAMETER');
      expect(err.details).toEqual({ parameter: 'body' });
      expect(err.message).toContain('{"name": "x"}');
    }
  });

  it.each([
    [{ name: 3 }, 'name', 'expected a string'],
    [{ name: '   ' }, 'name', 'at least 1 character'],
    [{ name: 'toolong' }, 'name', 'at most 5 characters'],
    [{ size: 1.5 }, 'size', 'expected an int'],
    [{ tags: [] }, 'tags', 'at least 1 item'],
    [{ tags: ['c'] }, 'tags.0', 'one of "a", "b"'],
    [{ nested: {} }, 'nested.depth', 'required'],
    [{ page: '0' }, 'page', 'whole number from 1 to 100'],
    [{ page: '1e2' }, 'page', 'whole number from 1 to 100'],
  ])('%j → INVALID_PARAMETER naming %s', (input, parameter, words) => {
    const err = refusal(() => parseRequest(body, input));
    expect(err.code).toBe('INVALID_PARAMETER');
    expect(err.details).toEqual({ parameter });
    expect(err.message).toContain(words);
  });

  it('reports fields in the schema order, whatever order the client sent them in', () => {
    expect(refusal(() => parseRequest(body, { tags: 'x', name: 3 })).details).toEqual({ parameter: 'name' });
  });

  it('a ranked refusal comes before the fields', () => {
    const ranked = z
      .object({ a: z.string(), b: z.string() })
      .superRefine((v, ctx) => {
        if ((v as { b?: unknown }).b === 'conflict') refuse(ctx, new ServiceError('CONFLICTING_FIELDS', 'no'), { rank: -1 });
      }, { when: () => true });
    // The refinement runs despite `a` failing, and its rank puts it first.
    expect(refusal(() => parseRequest(ranked, { a: 1, b: 'conflict' })).code).toBe('CONFLICTING_FIELDS');
    expect(refusal(() => parseRequest(ranked, { a: 1, b: 'fine' })).details).toEqual({ parameter: 'a' });
  });

  it('a refusal carried by a refinement is thrown as it is', () => {
    const err = refusal(() => parseRequest(body, { name: 'both', size: 2 }));
    expect(err.code).toBe('CONFLICTING_FIELDS');
  });

  it('refusals give a field its spec code and see the value sent there', () => {
    const seen: unknown[] = [];
    const err = refusal(() =>
      parseRequest(body, { tags: ['c'] }, { refusals: { tags: (value) => (seen.push(value), new ServiceError('INVALID_TAGS', 'bad tags', { invalid: value })) } }),
    );
    expect(err.code).toBe('INVALID_TAGS');
    expect(seen).toEqual([['c']]);
  });

  it('the longest refusal path wins, and a prefix names nested parameters', () => {
    const refusals = { nested: () => new ServiceError('NESTED', 'n'), 'nested.depth': () => new ServiceError('DEPTH', 'd') };
    expect(refusal(() => parseRequest(body, { nested: { depth: 'x' } }, { refusals })).code).toBe('DEPTH');
    expect(refusal(() => parseRequest(body, { nested: 'x' }, { refusals })).code).toBe('NESTED');
    expect(refusal(() => parseRequest(body, { size: 0 }, { prefix: 'options' })).details).toEqual({ parameter: 'options.size' });
  });

  it('matches a refusal path by whole field names, not by a prefix of one', () => {
    const schema = z.object({ tag: optional(z.string()), tags: optional(z.string()) });
    const refusals = { tag: () => new ServiceError('INVALID_TAG', 't') };
    expect(refusal(() => parseRequest(schema, { tags: 3 }, { refusals })).details).toEqual({ parameter: 'tags' });
    expect(refusal(() => parseRequest(schema, { tag: 3 }, { refusals })).code).toBe('INVALID_TAG');
  });

  it('runs the first check before the schema, on objects only', () => {
    const first = () => new ServiceError('TOO_MANY', 'too many');
    expect(refusal(() => parseRequest(body, { name: 3 }, { first })).code).toBe('TOO_MANY');
    expect(refusal(() => parseRequest(body, [], { first })).code).toBe('INVALID_PARAMETER');
  });

  it('takes a query integer at both of its bounds, and nothing past them', () => {
    expect(parseRequest(body, { page: '1' }).page).toBe(1);
    expect(parseRequest(body, { page: '100' }).page).toBe(100);
    expect(refusal(() => parseRequest(body, { page: '101' })).details).toEqual({ parameter: 'page' });
  });

  it('reads a blank JSON form field as absent, and text that is not JSON as its own refusal', () => {
    const form = z.object({ options: jsonFormField(optional(z.object({ fit: z.string() })), (reason) => new ServiceError('INVALID_OPTIONS_JSON', reason)) });
    expect(parseRequest(form, { options: '  ' }).options).toBeUndefined();
    expect(parseRequest(form, { options: '{"fit": "cover"}' }).options).toEqual({ fit: 'cover' });
    expect(refusal(() => parseRequest(form, { options: '{fit' })).code).toBe('INVALID_OPTIONS_JSON');
  });

  it('a query integer shows as an integer in JSON Schema', () => {
    const schema = z.toJSONSchema(z.object({ page: queryInteger(1, 100) }), { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, unknown> };
    expect(schema.properties.page).toEqual({ type: 'integer', minimum: 1, maximum: 100 });
  });

  it('finds issues exactly at a path, or anywhere under it', () => {
    const issues = [{ code: 'a', path: ['files', 0, 'path'] }, { code: 'b', path: ['files', 1] }];
    expect(issueAt(issues, 'files', 1)?.code).toBe('b');
    expect(issueAt(issues, 'files', 0)).toBeUndefined();
    expect(issueUnder(issues, 'files', 0)?.code).toBe('a');
    expect(issueUnder(issues, 'options')).toBeUndefined();
  });

  it('reads base64 fields as clients send them: data: prefix, line breaks, either alphabet', () => {
    const text = base64Text('data:application/pdf;base64,JVBE\nRi0x')!;
    expect(decodeBase64Text(text).toString()).toBe('%PDF-1');
    expect(decodedLength(text)).toBe(6);
    expect(decodeBase64Text(base64Text('-_8=')!)).toEqual(Buffer.from([0xfb, 0xff]));
    expect(base64Text('abc*')).toBeNull();
    expect(base64Text('abcde')).toBeNull();
  });

  it('a JSON object is neither null nor an array', () => {
    expect([{}, [], null, 'x'].map(isJsonObject)).toEqual([true, false, false, false]);
  });
});

describe('LABEL_PATTERN (the OpenAPI document\'s statement of a label)', () => {
  it('agrees with labelSchema, but for names only of invisible characters and half surrogate pairs', () => {
    const label = labelSchema(100);
    const pattern = new RegExp(LABEL_PATTERN);
    const samples = ['orders', ' orders ', 'ci build', 'ci\n', '\tci', 'a', 'é', '', '   ', '\n', 'ci\u0007', 'c\ni', 'prod\u202e', '\u2066x', 'a\u0085b', 'a\u00a0b', '\u00a0a\u00a0'];
    for (const sample of samples) expect([sample, pattern.test(sample)]).toEqual([sample, label.safeParse(sample).success]);
    // Not stated by the pattern (no \\p classes without flags): refused by the service, accepted by the document.
    for (const sample of ['\u200b', 'a\ud800']) expect([pattern.test(sample), label.safeParse(sample).success]).toEqual([true, false]);
  });
});
