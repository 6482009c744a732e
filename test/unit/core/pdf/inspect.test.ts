import { ServiceError } from '../../../../functions/core/errors';
import { inspectPdf } from '../../../../functions/core/pdf/inspect';
import { encryptedPdf, pdfWithBookmarksAndLinks, pdfWithForm, pdfWithSignature, simplePdf, truncated, zeroPagePdf } from '../../../support/pdf-fixtures';

const opts = { filename: 'x.pdf', maxPages: 500, forEdit: false };

describe('inspectPdf', () => {
  it('describes a plain PDF', async () => {
    const bytes = await simplePdf(3, { size: [300, 400] });
    expect(inspectPdf(bytes, opts)).toEqual({
      filename: 'x.pdf',
      size_bytes: bytes.length,
      page_count: 3,
      encrypted: false,
      has_forms: false,
      has_signatures: false,
      first_page: { width: 300, height: 400 },
      warnings: [],
      max_pages: 500,
    });
  });

  it('answers encrypted files (owner password only too) with encrypted: true and page_count: null', async () => {
    for (const userPassword of ['', 'secret']) {
      const result = inspectPdf(await encryptedPdf({ userPassword, ownerPassword: 'owner' }), { ...opts, forEdit: true });
      expect(result).toMatchObject({ encrypted: true, page_count: null, first_page: null, pages: null, form: null });
    }
  });

  it('predicts the merge/split warnings: forms, bookmarks, signatures', async () => {
    expect(inspectPdf(await pdfWithForm(), opts)).toMatchObject({ has_forms: true, has_signatures: false, warnings: ['FORM_FIELDS_NOT_PRESERVED'] });
    expect(inspectPdf(await pdfWithSignature(), opts)).toMatchObject({ has_forms: true, has_signatures: true, warnings: ['SIGNATURE_INVALIDATED'] });
    expect(inspectPdf(await pdfWithBookmarksAndLinks(), opts)).toMatchObject({ has_forms: false, warnings: ['BOOKMARKS_NOT_PRESERVED'] });
  });

  it('for: edit lists page ids with size and rotation, and every form field', async () => {
    const pages = inspectPdf(await simplePdf(2, { size: [200, 100], rotate: 270 }), { ...opts, forEdit: true }).pages;
    expect(pages).toEqual([
      { id: 'p0', width: 200, height: 100, rotation: 270 },
      { id: 'p1', width: 200, height: 100, rotation: 270 },
    ]);
    const { form } = inspectPdf(await pdfWithForm(), { ...opts, forEdit: true });
    expect(form).toEqual(
      expect.arrayContaining([
        { name: 'applicant.name', type: 'text', value: 'Ada Lovelace', options: null, required: true, read_only: false, page: 1, page_id: 'p0', max_length: 40 },
        { name: 'agree', type: 'checkbox', value: true, options: ['Yes'], required: false, read_only: false, page: 1, page_id: 'p0' },
        { name: 'country', type: 'dropdown', value: 'FR', options: ['DE', 'FR', 'IT'], required: false, read_only: true, page: 1, page_id: 'p0' },
        { name: 'size', type: 'radio', value: 'L', options: ['S', 'L'], required: false, read_only: false, page: 1, page_id: 'p0' },
      ]),
    );
    expect(form).toHaveLength(4);
    const signed = inspectPdf(await pdfWithSignature(), { ...opts, forEdit: true }).form;
    expect(signed).toEqual([{ name: 'Signature1', type: 'signature', value: true, options: null, required: false, read_only: false, page: 1, page_id: 'p0' }]);
  });

  it('reports zero pages truthfully and refuses damaged files as INVALID_PDF', async () => {
    expect(inspectPdf(await zeroPagePdf(), opts)).toMatchObject({ page_count: 0, first_page: null });
    try {
      inspectPdf(truncated(await simplePdf(2)), opts);
      throw new Error('not refused');
    } catch (err) {
      expect(err).toBeInstanceOf(ServiceError);
      expect((err as ServiceError).details).toMatchObject({ filename: 'x.pdf', input_index: 0 });
      expect((err as ServiceError).code).toBe('INVALID_PDF');
    }
  });
});
