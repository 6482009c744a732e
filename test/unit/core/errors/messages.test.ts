/**
 * Refusals say what happened in the caller's terms and what to do next (functions/core/errors/README.md). These are
 * the messages that used to stop at what happened.
 */
import { mapRenderError } from '../../../../functions/adapters/chromium/renderer';
import { parseJsonConversion } from '../../../../functions/core/conversion/request';
import { listJobFiles } from '../../../../functions/core/jobs/file-access';
import { newJob } from '../../../../functions/core/jobs/job';
import { MAX_RANGE_PARTS, parsePageRange } from '../../../../functions/core/pdf/page-ranges';
import { parseUploadSize } from '../../../../functions/core/pdfops/background';
import { parseMergeRequest, parseSplitRequest } from '../../../../functions/core/pdfops/requests';
import { noUsableImages } from '../../../../functions/core/render/images';
import { normalisePdfOptions } from '../../../../functions/core/render/options';
import { refusal, rejection } from '../../../support/errors';
import { memoryWorld } from '../../../support/memory';

describe('refusals that say what to do next', () => {
  it('an empty content field asks for the document', () => {
    expect(refusal(() => parseJsonConversion({ input_type: 'markdown', markdown: '   ' }))).toMatchObject({
      code: 'EMPTY_CONTENT_FIELD',
      message: 'The "markdown" field is empty; send the document to convert in it.',
      details: { field: 'markdown' },
    });
  });

  it('no usable image: the first problem, then what to do about it', () => {
    const err = noUsableImages([
      { index: 0, filename: 'a.png', code: 'INVALID_IMAGE_DATA', message: 'The PNG is truncated.' },
      { index: 1, filename: 'b.gif', code: 'INVALID_IMAGE_FORMAT', message: 'Only PNG and JPEG images are accepted.' },
    ]);
    expect(err).toMatchObject({ code: 'INVALID_IMAGE_DATA', message: 'No image could be used: The PNG is truncated. Export or download the image again and resend it.' });
    expect(noUsableImages([{ index: 0, filename: null, code: 'IMAGE_TOO_LARGE', message: 'The image is 6000000 bytes; the limit is 5242880 (5 MB).' }]).message).toMatch(
      /Resize or compress the image below the limit\.$/,
    );
  });

  it('a page range with too many parts says how to shorten it', () => {
    expect(refusal(() => parsePageRange(Array(MAX_RANGE_PARTS + 1).fill('2').join(','))).message).toBe(
      `A page range may have at most ${MAX_RANGE_PARTS} parts; this one has ${MAX_RANGE_PARTS + 1}. Join neighbouring pages into ranges such as "1-20".`,
    );
  });

  it('an empty PDF input asks for its bytes, naming the file', () => {
    const pdf = { filename: 'a.pdf', data: Buffer.from('%PDF-1.4 x') };
    expect(refusal(() => parseMergeRequest({ form: { files: [pdf, { filename: 'b.pdf', data: Buffer.alloc(0) }] } }))).toMatchObject({
      code: 'MISSING_PDF',
      message: 'b.pdf is empty (0 bytes); attach the PDF itself.',
      details: { filename: 'b.pdf', input_index: 1 },
    });
    expect(refusal(() => parseSplitRequest({ form: { file: [{ filename: 'x.pdf', data: Buffer.alloc(0) }], split: '{"mode":"each_page"}' } }))).toMatchObject({
      code: 'MISSING_PDF',
      message: 'x.pdf is empty (0 bytes); attach the PDF itself.',
      details: { filename: 'x.pdf', input_index: 0 },
    });
  });

  it('an upload over 150 MB says to split the PDF', () => {
    expect(refusal(() => parseUploadSize({ content_length_bytes: 150 * 1024 * 1024 + 1 })).message).toMatch(/\(150 MB\)\. Split the PDF into smaller files first\.$/);
  });

  it('a zero paper size names the option and shows a valid value', () => {
    expect(refusal(() => normalisePdfOptions({ format: null, width: 0, height: '100mm' }))).toMatchObject({
      code: 'INVALID_PARAMETER',
      message: 'options.width must be greater than zero, e.g. "210mm" or "8.5in".',
      details: { parameter: 'options.width' },
    });
  });

  it('pageRanges past the end says what to select', () => {
    expect(mapRenderError(new Error('Protocol error (Page.printToPDF): Page range exceeds page count'))).toMatchObject({
      code: 'INVALID_PARAMETER',
      message: 'options.pageRanges asks for pages beyond the end of the document; select pages the document has, or leave options.pageRanges out.',
      details: { parameter: 'options.pageRanges' },
    });
  });

  it('per-file results of a job without them point to its status and download routes', async () => {
    const job = newJob({ job_id: 'job_q', account_id: 'acct1', job_type: 'quick', status: 'completed', now: new Date() });
    const err = await rejection(listJobFiles(memoryWorld(), job));
    expect(err).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'job_id', job_id: 'job_q', job_type: 'quick' } });
    expect(err.message).toBe('Job job_q is a quick job; only bulk and merge/split jobs have per-file results. Use GET /jobs/job_q for its status and GET /jobs/job_q/download for its output.');
  });
});
