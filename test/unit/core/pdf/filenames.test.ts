import fc from 'fast-check';
import { ServiceError } from '../../../../functions/core/errors';
import { basenameOf, dedupeFilenames, parseFilenamePattern, renderFilename, sanitizeFilename } from '../../../../functions/core/pdf/filenames';

describe('file names', () => {
  it('never produces unsafe names, whatever comes in', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (name) => {
        const safe = sanitizeFilename(name, 'fallback');
        expect(safe).not.toMatch(/[\u0000-\u001f\u007f<>:"/\\|?*]/);
        expect(safe.length).toBeGreaterThan(0);
        expect(safe.length).toBeLessThanOrEqual(200);
        expect(safe.startsWith('.')).toBe(false);
      }),
    );
    // Any UTF-16, lone surrogates included: the result is well-formed and fits a file system's 255 bytes.
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (name) => {
        const safe = sanitizeFilename(name, 'fallback');
        expect(() => encodeURIComponent(safe)).not.toThrow();
        expect(Buffer.byteLength(safe)).toBeLessThanOrEqual(240);
        expect(safe).not.toMatch(/[\p{Cc}\u202a-\u202e\u2066-\u2069]/u);
      }),
    );
    expect(sanitizeFilename(`${'a'.repeat(195)}${'😀'.repeat(10)}.pdf`, 'f')).toBe(`${'a'.repeat(195)}.pdf`); // the emoji would not fit whole
    expect(sanitizeFilename('x\ud800.pdf', 'f')).toBe('x_.pdf');
    expect(sanitizeFilename('invoice\u202efdp.exe', 'f')).toBe('invoice_fdp.exe');
    expect(basenameOf('Invoice 7.PDF')).toBe('Invoice 7');
    expect(sanitizeFilename('..', 'x')).toBe('x');
  });

  it('never ends a shortened name in a dot or a space (where the cut falls after one)', () => {
    expect(sanitizeFilename(`${'a'.repeat(199)} ${'b'.repeat(100)}`, 'f')).toBe('a'.repeat(199));
    expect(sanitizeFilename(`${'a'.repeat(199)}.${'b'.repeat(100)}`, 'f')).toBe('a'.repeat(199));
    expect(sanitizeFilename(`${'a'.repeat(194)} . ${'b'.repeat(100)}.pdf`, 'f')).toBe(`${'a'.repeat(194)}.pdf`);
  });

  it('renders tokens and refuses unknown ones', () => {
    const p = parseFilenamePattern('{basename}_{index}_{index:03}_{index:05}_{pages}');
    expect(renderFilename(p, { basename: 'doc', index: 7, pages: '3-4' }, 'f')).toBe('doc_7_007_00007_3-4.pdf');
    for (const bad of ['{name}', '{index:3}', 'a{b', 'x}', '', 7]) {
      expect(() => parseFilenamePattern(bad)).toThrow(ServiceError);
    }
  });

  it('refuses a blank pattern, {index:00} and patterns past 255 characters, at their edges', () => {
    const refusal = (value: unknown) => {
      try {
        parseFilenamePattern(value);
      } catch (err) {
        return (err as ServiceError).details;
      }
      return null;
    };
    expect(refusal('   ')).toMatchObject({ parameter: 'options.filename_pattern' });
    expect(refusal('{index:00}')).toMatchObject({ parameter: 'options.filename_pattern', token: '{index:00}' });
    expect(refusal('{index:01}')).toBeNull();
    expect(refusal(`${'a'.repeat(251)}.pdf`)).toBeNull();
    expect(refusal(`${'a'.repeat(252)}.pdf`)).toMatchObject({ parameter: 'options.filename_pattern' });
  });

  it('gives output names Windows reserves for devices a _ prefix (a split ZIP holding CON.pdf did not unzip there)', () => {
    for (const pattern of ['{basename}', '{basename}.pdf', 'nul', 'Com1.pdf', 'LPT9']) {
      const name = renderFilename(parseFilenamePattern(pattern), { basename: 'CON', index: 1, pages: '1' }, 'f');
      expect(name).toMatch(/^_/);
    }
    expect(renderFilename(parseFilenamePattern(undefined), { basename: 'CON', index: 1, pages: '1' }, 'f')).toBe('CON-001.pdf');
    expect(renderFilename(parseFilenamePattern('{basename}'), { basename: 'console', index: 1, pages: '1' }, 'f')).toBe('console.pdf');
  });

  it('suffixes duplicates -2, -3 (case-insensitively) and keeps names unique', () => {
    expect(dedupeFilenames(['a.pdf', 'A.pdf', 'a.pdf', 'b.pdf'])).toEqual(['a.pdf', 'A-2.pdf', 'a-3.pdf', 'b.pdf']);
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a.pdf', 'a-2.pdf', 'b.pdf', 'B.PDF'), { maxLength: 30 }), (names) => {
        const out = dedupeFilenames(names);
        expect(new Set(out.map((n) => n.toLowerCase())).size).toBe(out.length);
      }),
    );
  });
});
