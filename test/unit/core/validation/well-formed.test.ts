import { wellFormed } from '../../../../functions/core/validation/well-formed';

describe('wellFormed', () => {
  it('replaces each half surrogate pair with U+FFFD and keeps the characters around it and whole pairs', () => {
    expect(wellFormed('a\ud800b\udc00c\udbff')).toBe('a\ufffdb\ufffdc\ufffd');
    expect(wellFormed('\udc00\ud800')).toBe('\ufffd\ufffd');
    expect(wellFormed('emoji 😀 café')).toBe('emoji 😀 café');
  });
});
