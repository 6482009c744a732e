import { type BundleIndex, bundleDocumentAt, bundleFileSize } from '../../../../functions/core/bulk/storage';
import { parsePdfOptions } from '../../../../functions/core/render/options';

const at = (start: number, size: number) => ({ start, compressed: size, method: 0, size, crc: 0 });

/** A bundle index as Prepare writes it: `sizes` by path, the `.html` files the documents. */
function indexOf(sizes: Record<string, number>): BundleIndex {
  const paths = Object.keys(sizes);
  const entries = Object.fromEntries(paths.map((p, i) => [p, at(i * 1000, sizes[p])]));
  const files = paths.filter((p) => p.endsWith('.html')).map((p, index) => ({ index, path: p, size: sizes[p], entry: entries[p] }));
  return { bundle_type: 'html', options: parsePdfOptions({}), zip_key: 'zip', files, entries };
}

describe('finding a bundle file in another Unicode normalisation', () => {
  // ṩ three ways: composed (U+1E69), and s with its two marks in either order; all three are the same text in NFC.
  const composed = '\u1e69';
  const marksBelowFirst = 's\u0323\u0307';
  const marksAboveFirst = 's\u0307\u0323';

  it('finds the one file whose name is the same text', () => {
    const index = indexOf({ [`${marksBelowFirst}.css`]: 5, [`${marksBelowFirst}.html`]: 7 });
    expect(bundleFileSize(index, `${marksAboveFirst}.css`)).toBe(5);
    expect(bundleDocumentAt(index, `${marksAboveFirst}.html`)?.path).toBe(`${marksBelowFirst}.html`);
  });

  it('finds none when two files are that text: a name not exactly either picks neither', () => {
    const index = indexOf({ [`${composed}.css`]: 5, [`${marksBelowFirst}.css`]: 6, [`${composed}.html`]: 7, [`${marksBelowFirst}.html`]: 8 });
    expect([bundleFileSize(index, `${marksAboveFirst}.css`), bundleDocumentAt(index, `${marksAboveFirst}.html`)]).toEqual([null, undefined]);
    // Each is still found by its own name.
    expect([bundleFileSize(index, `${composed}.css`), bundleFileSize(index, `${marksBelowFirst}.css`)]).toEqual([5, 6]);
    expect([bundleDocumentAt(index, `${composed}.html`)?.size, bundleDocumentAt(index, `${marksBelowFirst}.html`)?.size]).toEqual([7, 8]);
  });
});
