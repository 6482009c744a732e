import { normalisePath, pathProblem, requestPath } from '../../../../functions/core/bulk/paths';
import { refusal } from '../../../support/errors';

describe('pathProblem', () => {
  it.each([['./C:/x.html'], ['.//c:/x.html'], ['././D:x.html'], ['./c:']])('%j is absolute: normalised, it starts with a drive letter', (path) => {
    expect(pathProblem(path)).toBe('absolute');
    expect(refusal(() => requestPath(path, 'files[0].path'))).toMatchObject({ code: 'INVALID_BULK_PATH', details: { reason: 'absolute' } });
  });

  it('accepts a drive-letter-like segment that is not the first (no drive letter once normalised)', () => {
    expect(pathProblem('docs/C:/x.html')).toBeNull();
    expect(normalisePath('./docs/x.html')).toBe('docs/x.html');
  });
});
