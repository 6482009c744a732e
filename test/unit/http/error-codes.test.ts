import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { statusForCode } from '../../../functions/http/errors';

const ROOT = path.resolve(__dirname, '../../../functions');
/** Every source file: a code thrown anywhere must have its status in the one table (an unmapped one answers 500). */
const DIRS = ['.'];

function files(p: string): string[] {
  const full = path.join(ROOT, p);
  return statSync(full).isDirectory() ? readdirSync(full).flatMap((f) => files(path.join(p, f))) : full.endsWith('.ts') ? [full] : [];
}

describe('error codes', () => {
  it('every code the service throws has its status in the one error table', () => {
    const codes = new Set<string>();
    for (const f of DIRS.flatMap(files)) {
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(/(?:ServiceError|PdfProblem)\(\s*'([A-Z_]+)'/g)) codes.add(m[1]);
      for (const m of text.matchAll(/'((?:PDF|INVALID)_[A-Z_]+)'/g)) codes.add(m[1]);
    }
    expect(codes.size).toBeGreaterThan(20);
    const unmapped = [...codes].filter((c) => statusForCode(c) === undefined);
    expect(unmapped).toEqual([]);
    // The spec's statuses for the PDF tools table.
    expect(
      Object.fromEntries(
        ['MISSING_PDFS', 'TOO_MANY_FILES', 'PDF_INPUT_TOO_LARGE', 'INVALID_PAGE_RANGE', 'PAGE_OUT_OF_RANGE', 'INVALID_SPLIT_MODE', 'OUTPUT_COUNT_EXCEEDED', 'OUTPUT_TOO_LARGE',
          'PDF_TOOLS_NOT_ENABLED', 'FORBIDDEN', 'UPLOAD_NOT_FOUND', 'PDFOP_TIMEOUT', 'PDF_JOB_ALREADY_ACTIVE', 'PDF_ENCRYPTED', 'INVALID_PDF', 'PDF_NO_PAGES', 'PDF_TOO_COMPLEX'].map((c) => [c, statusForCode(c)]),
      ),
    ).toEqual({
      MISSING_PDFS: 400, TOO_MANY_FILES: 400, PDF_INPUT_TOO_LARGE: 400, INVALID_PAGE_RANGE: 400, PAGE_OUT_OF_RANGE: 400, INVALID_SPLIT_MODE: 400,
      OUTPUT_COUNT_EXCEEDED: 400, OUTPUT_TOO_LARGE: 400, PDF_TOOLS_NOT_ENABLED: 403, FORBIDDEN: 403, UPLOAD_NOT_FOUND: 404, PDFOP_TIMEOUT: 408,
      PDF_JOB_ALREADY_ACTIVE: 409, PDF_ENCRYPTED: 422, INVALID_PDF: 422, PDF_NO_PAGES: 422, PDF_TOO_COMPLEX: 422,
    });
  });
});
