import { rejection, thrownBy } from '../../../support/errors';
import { runIsolated } from '../../../support/hang-guard';
import { ServiceError } from '../../../../functions/core/errors';
import { Deadline } from '../../../../functions/core/pdf/errors';
import { inspectPdf, pageBox } from '../../../../functions/core/pdf/inspect';
import { MAX_FORM_LISTING } from '../../../../functions/core/pdf/forms';
import { PDFDocument, PDFName, PDFRef } from 'pdf-lib';
import { encryptedPdf, pdfWithBookmarksAndLinks, pdfWithForm, pdfWithSignature, pdfOfObjects, simplePdf, truncated, zeroPagePdf } from '../../../support/pdf-fixtures';

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

  it('reports the form and signature an encrypted file shows outside its object streams', async () => {
    const result = inspectPdf(await encryptedPdf({ userPassword: '', ownerPassword: 'owner', source: await pdfWithSignature() }), opts);
    expect(result).toMatchObject({ encrypted: true, page_count: null, has_forms: true, has_signatures: true });
  });

  it('normalises a negative or over-a-turn /Rotate to 0, 90, 180 or 270', async () => {
    for (const [rotate, rotation] of [
      [-90, 270],
      [-180, 180],
      [450, 90],
    ]) {
      const doc = await PDFDocument.load(await simplePdf(1));
      doc.getPage(0).node.set(PDFName.of('Rotate'), doc.context.obj(rotate));
      expect(inspectPdf(await doc.save(), { ...opts, forEdit: true }).pages).toEqual([expect.objectContaining({ rotation })]);
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

  it('for: edit finds a widget\'s page when its /P names the page under another generation', async () => {
    const doc = await PDFDocument.load(await pdfWithForm());
    const [page1, page2] = doc.getPages();
    const field = doc.getForm().getTextField('applicant.name');
    // The widget names page 2 as `N 5 R` and no page lists it in /Annots: only /P says where it is.
    field.acroField.getWidgets()[0].dict.set(PDFName.of('P'), PDFRef.of(page2.ref.objectNumber, 5));
    page1.node.delete(PDFName.of('Annots'));
    const { form } = inspectPdf(await doc.save({ useObjectStreams: false }), { ...opts, forEdit: true });
    expect(form?.find((f) => f.name === 'applicant.name')).toMatchObject({ page: 2, page_id: 'p1' });
  });

  it('for: edit refuses documents over the 200 pages the editor opens (their page list would not even fit a response)', async () => {
    const err = await rejection(Promise.resolve().then(async () => inspectPdf(await simplePdf(201), { ...opts, forEdit: true })));
    expect(err).toMatchObject({ code: 'PDF_PAGE_LIMIT_EXCEEDED', details: { pages: 201, max_pages: 200 } });
    // Without for: edit the same document is described as usual.
    expect(inspectPdf(await simplePdf(201), opts).page_count).toBe(201);
    expect(inspectPdf(await simplePdf(200), { ...opts, forEdit: true }).pages).toHaveLength(200);
  });

  it('measures the visible area: the CropBox clipped to the MediaBox, in /UserUnit units', async () => {
    const doc = await PDFDocument.create();
    const wide = doc.addPage();
    wide.setMediaBox(-50, -50, 100, 200);
    wide.setCropBox(0, 0, 500, 500);
    const inside = doc.addPage([600, 800]);
    inside.setCropBox(100, 100, 200, 300); // x, y, width, height
    const missing = doc.addPage([600, 800]);
    missing.setCropBox(1000, 1000, 50, 50);
    const scaled = doc.addPage([200, 300]);
    scaled.node.set(PDFName.of('UserUnit'), doc.context.obj(2));
    const odd = doc.addPage([200, 300]);
    odd.node.set(PDFName.of('UserUnit'), doc.context.obj(-3));
    const result = inspectPdf(Buffer.from(await doc.save()), { ...opts, forEdit: true });
    expect(result.pages!.map(({ width, height }) => [width, height])).toEqual([
      [50, 150],
      [200, 300],
      [600, 800],
      [400, 600],
      [200, 300],
    ]);
    expect(result.first_page).toEqual({ width: 50, height: 150 });
  });

  it('reads a page box whose corners are finite but too far apart to measure as the default size, never null', async () => {
    const doc = await PDFDocument.create();
    const box = doc.context.obj([-1e308, -1e308, 1e308, 1e308]);
    const reader = { resolve: (x: unknown) => x } as unknown as Parameters<typeof pageBox>[0];
    expect(pageBox(reader, { cropBox: box } as unknown as Parameters<typeof pageBox>[1])).toEqual({ width: 612, height: 792 });
    expect(pageBox(reader, { cropBox: doc.context.obj([0, 0, 100, 50]) } as unknown as Parameters<typeof pageBox>[1])).toEqual({ width: 100, height: 50 });
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

describe('inspectPdf within its time', () => {
  it('ends reading at its deadline as 408 PDFOP_TIMEOUT naming the file, and reads the same file without one', async () => {
    const bytes = await simplePdf(600);
    const deadline = new Deadline(0); // already past: the first look at the clock ends the reading
    const err = thrownBy(() => inspectPdf(bytes, { ...opts, deadline, timeoutSeconds: 25 }), ServiceError);
    expect(err).toMatchObject({ code: 'PDFOP_TIMEOUT', details: { filename: 'x.pdf', input_index: 0, timeout_seconds: 25 } });
    expect(err.message).toContain('within 25 seconds');
    expect(inspectPdf(bytes, { ...opts, deadline: Deadline.in(60_000) }).page_count).toBe(600);
  });
});

describe('inspectPdf on a hostile form', () => {
  it('reads a form whose fields all share one /Kids array of them all without N² work (8,000 fields took 19 s)', () => {
    // Hang guard in a separate process: a quadratic walk blocks the event loop, which jest cannot interrupt.
    const outcome = runIsolated(`
      const { inspectPdf } = load('functions/core/pdf/inspect.ts');
      const { pdfOfObjects } = load('test/support/pdf-fixtures.ts');
      const fields = 20000;
      let kids = ''; for (let i = 0; i < fields; i++) kids += (10 + i) + ' 0 R ';
      const objects = { 1: '<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields 9 0 R>>>>', 2: '<</Type/Pages/Kids[3 0 R]/Count 1>>', 3: '<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>', 9: '[' + kids + ']' };
      for (let i = 0; i < fields; i++) objects[10 + i] = '<</Kids 9 0 R>>';
      const result = inspectPdf(pdfOfObjects(objects), { filename: 'f.pdf', maxPages: 500, forEdit: false });
      console.log(JSON.stringify({ pages: result.page_count, forms: result.has_forms }));
    `, 60_000) as { pages: number; forms: boolean };
    expect(outcome).toEqual({ pages: 1, forms: true });
  });

  it('for: edit refuses a form whose named fields all share one /Kids array of widgets as PDF_TOO_COMPLEX, without N² work (10,000 of each took 31 s)', () => {
    const outcome = runIsolated(`
      const { inspectPdf } = load('functions/core/pdf/inspect.ts');
      const { pdfOfObjects } = load('test/support/pdf-fixtures.ts');
      const fields = 3000, widgets = 3000;
      let list = ''; for (let i = 0; i < fields; i++) list += (10 + i) + ' 0 R ';
      let kids = ''; for (let i = 0; i < widgets; i++) kids += (10 + fields + i) + ' 0 R ';
      const objects = { 1: '<</Type/Catalog/Pages 2 0 R/AcroForm<</Fields 8 0 R>>>>', 2: '<</Type/Pages/Kids[3 0 R]/Count 1>>', 3: '<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>', 8: '[' + list + ']', 9: '[' + kids + ']' };
      for (let i = 0; i < fields; i++) objects[10 + i] = '<</T(f' + i + ')/FT/Tx/Kids 9 0 R>>';
      for (let i = 0; i < widgets; i++) objects[10 + fields + i] = '<</Subtype/Widget/Rect[0 0 1 1]>>';
      let code = null, reason = null;
      try { inspectPdf(pdfOfObjects(objects), { filename: 'f.pdf', maxPages: 500, forEdit: true }); } catch (err) { code = err.code; reason = err.details && err.details.reason; }
      console.log(JSON.stringify({ code, reason }));
    `, 60_000);
    expect(outcome).toEqual({ code: 'PDF_TOO_COMPLEX', reason: 'form_too_complex' });
  });

  it(`for: edit refuses a listing past ${MAX_FORM_LISTING.toLocaleString('en-US')} characters as PDF_TOO_COMPLEX: one value shared by many fields is listed for each (6,000 fields of 100,000 characters: 35 s, then too long for JSON)`, () => {
    const fields = 200;
    const pdf = pdfOfObjects({
      1: '<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields 4 0 R >> >>',
      2: '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>',
      4: `[${Array.from({ length: fields }, (_, i) => `${i + 10} 0 R`).join(' ')}]`,
      5: `(${'v'.repeat(20_000)})`,
      ...Object.fromEntries(Array.from({ length: fields }, (_, i) => [i + 10, `<< /T (f${i}) /FT /Tx /V 5 0 R >>`])),
    });
    expect(inspectPdf(pdf, opts).has_forms).toBe(true);
    const err = thrownBy(() => inspectPdf(pdf, { ...opts, forEdit: true }), ServiceError);
    expect([err.code, err.details.reason]).toEqual(['PDF_TOO_COMPLEX', 'form_too_large']);
  });
});
