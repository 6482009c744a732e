import { MAX_JSON_DEPTH, parseJsonText } from '../../../../functions/core/validation/json-text';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('parseJsonText', () => {
  it('parses JSON up to the depth limit', () => {
    expect(parseJsonText('{"a": [1, {"b": null}], "c": "x"}')).toEqual({ a: [1, { b: null }], c: 'x' });
    expect(() => parseJsonText(nested(MAX_JSON_DEPTH))).not.toThrow();
    expect(() => parseJsonText(`{"x": ${nested(MAX_JSON_DEPTH - 1)}}`)).not.toThrow();
  });

  it('refuses deeper documents as it refuses text that is not JSON (a SyntaxError)', () => {
    expect(() => parseJsonText(nested(MAX_JSON_DEPTH + 1))).toThrow(SyntaxError);
    expect(() => parseJsonText(`{"input_type": ${nested(100_000)}, "html": "x"}`)).toThrow(`nested more than ${MAX_JSON_DEPTH} levels`);
    expect(() => parseJsonText('{"a": ')).toThrow(SyntaxError);
  });
});
