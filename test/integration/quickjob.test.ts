import { type TestAccount, type TestStack, startTestStack } from '../support/stack';
import { MM_PER_POINT, pdfFontNames, readPdf, readPdfDrawing } from '../support/pdf';
import { expectHourLink } from '../support/links';

let stack: TestStack;
let user: TestAccount;
/** While set, the service's clock stands still at this moment (it runs with the system's otherwise). */
let pinned: Date | undefined;

beforeAll(async () => {
  stack = await startTestStack({}, { clock: { now: () => (pinned ? new Date(pinned) : new Date()) } });
  user = await stack.account({ credits_usd: 5 });
});
afterAll(() => stack?.stop());

const quick = (body: unknown, key = user.api_key) => stack.request('POST', '/quickjob', { key, json: body });

async function pdfOf(res: Response) {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/pdf');
  const bytes = new Uint8Array(await res.arrayBuffer());
  expect(Buffer.from(bytes.slice(0, 5)).toString()).toBe('%PDF-');
  return { bytes, pages: await readPdf(bytes) };
}

/** One body printed with printBackground left out and set false: the fill colours of page 1 each way, and its text. */
async function printedWithAndWithoutBackground(body: Record<string, unknown>) {
  const withBg = await pdfOf(await quick(body));
  const without = await pdfOf(await quick({ ...body, options: { printBackground: false } }));
  return { fills: (await readPdfDrawing(withBg.bytes))[0].fillColors, fillsWithout: (await readPdfDrawing(without.bytes))[0].fillColors, textWithout: without.pages[0].text };
}

describe('POST /quickjob with HTML', () => {
  it('returns the PDF with the spec headers and records a completed job', async () => {
    const res = await quick({ input_type: 'html', html: '<h1>Invoice 42</h1><p>Total due</p>' });
    const { pages } = await pdfOf(res);
    const jobId = res.headers.get('x-job-id')!;
    expect(res.headers.get('x-pdf-pages')).toBe('1');
    expect(res.headers.get('x-pdf-truncated')).toBe('false');
    expect(res.headers.get('content-disposition')).toBe(`inline; filename=${jobId}.pdf`);
    expect(pages[0].text).toContain('Invoice 42');
    // A4 by default.
    expect(pages[0].width * MM_PER_POINT).toBeCloseTo(210, 0);
    expect(pages[0].height * MM_PER_POINT).toBeCloseTo(297, 0);

    const job = await (await stack.request('GET', `/jobs/${jobId}`, { key: user.api_key })).json();
    expect(job).toMatchObject({ job_id: jobId, status: 'completed', job_type: 'quick', mode: 'html', pages: 1, truncated: false, timeout_occurred: false, error_code: null, error_message: null });
    expect(job.s3_url).toBeUndefined();
    expect(Date.parse(job.created_at)).toBeLessThanOrEqual(Date.parse(job.completed_at));
  });

  it('stores a PDF over 4.4 MB and answers with its link, as for store: true (too big for a Lambda response)', async () => {
    // Noise does not compress: a 1400×1400 canvas of it prints as a ~7.8 MB image.
    const noise = `<canvas id=c width=1400 height=1400></canvas><script>
      const c = document.getElementById('c').getContext('2d'); const d = c.createImageData(1400, 1400);
      for (let i = 0; i < d.data.length; i++) d.data[i] = (Math.random() * 256) | 0; c.putImageData(d, 0, 0);</script>`;
    const before = (await stack.services.accounts.get(user.account_id))!.credits_micros;
    const res = await quick({ input_type: 'html', html: noise });
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'application/json']);
    const body = await res.json();
    expect(body).toEqual({ job_id: expect.any(String), pages: 1, truncated: false, download_url: expect.any(String), download_url_expires_at: expect.any(String) });
    const download = await fetch(body.download_url);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    expect(bytes.length).toBeGreaterThan(4.4 * 2 ** 20);
    expect((await stack.services.accounts.get(user.account_id))!.credits_micros).toBeLessThan(before);
  });

  it('prints Chinese, Japanese and Korean text in the fonts the render layer ships, as in AWS (the machine here has no such font)', async () => {
    const { bytes, pages } = await pdfOf(await quick({ input_type: 'html', html: '<p>Invoice 发票 請求書 청구서</p>' }));
    expect(pages[0].text).toContain('Invoice');
    expect(await pdfFontNames(bytes)).toEqual(['DejaVuSans', 'NotoSansKR-Regular', 'NotoSansSC-Regular']);
  });

  it('applies format, landscape and custom width/height with format null', async () => {
    const letter = await pdfOf(await quick({ input_type: 'html', html: '<p>x</p>', options: { format: 'Letter', landscape: true } }));
    expect(letter.pages[0].width).toBeCloseTo(11 * 72, 0);
    expect(letter.pages[0].height).toBeCloseTo(8.5 * 72, 0);
    const custom = await pdfOf(await quick({ input_type: 'html', html: '<p>x</p>', options: { format: null, width: '100mm', height: '150mm' } }));
    expect(custom.pages[0].width * MM_PER_POINT).toBeCloseTo(100, 0);
    expect(custom.pages[0].height * MM_PER_POINT).toBeCloseTo(150, 0);
  });

  it('keeps only pageRanges and counts the kept pages', async () => {
    const html = [1, 2, 3, 4].map((n) => `<div style="page-break-after:always">Page ${n}</div>`).join('');
    const res = await quick({ input_type: 'html', html, options: { pageRanges: '2-3' } });
    const { pages } = await pdfOf(res);
    expect(res.headers.get('x-pdf-pages')).toBe('2');
    expect(pages.map((p) => p.text)).toEqual(['Page 2', 'Page 3']);
  });

  it('refuses pageRanges past the end with INVALID_PARAMETER', async () => {
    const res = await quick({ input_type: 'html', html: '<p>one page</p>', options: { pageRanges: '5-6' } });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'options.pageRanges' } });
  });

  it('prints the default date/title header, and custom header/footer templates', async () => {
    const withDefault = await pdfOf(await quick({ input_type: 'html', html: '<title>Annual Report</title><p>Body text</p>', options: { displayHeaderFooter: true } }));
    expect(withDefault.pages[0].text).toContain('Annual Report');
    expect(withDefault.pages[0].text).toMatch(/\d{1,2}\/\d{1,2}\/\d{2,4}/);
    expect(withDefault.pages[0].text).toMatch(/1 \/ 1/);

    const custom = await pdfOf(
      await quick({
        input_type: 'html',
        html: '<p>Body</p>',
        options: {
          displayHeaderFooter: true,
          headerTemplate: '<span></span>',
          footerTemplate: '<div style="font-size:10px">Footer page <span class="pageNumber"></span> of <span class="totalPages"></span></div>',
          margin: { top: '10mm', bottom: '20mm' },
        },
      }),
    );
    expect(custom.pages[0].text).toContain('Footer page 1 of 1');

    // An empty template prints nothing (Chromium's own band would show "about:blank" and the date).
    const empty = await pdfOf(await quick({ input_type: 'html', html: '<title>T</title><p>Body</p>', options: { displayHeaderFooter: true, headerTemplate: '', footerTemplate: '' } }));
    expect(empty.pages[0].text.trim()).toBe('Body');
  });

  it('refuses a header template that links a stylesheet (Chromium cannot print it) with 400, not a 500', async () => {
    const res = await quick({ input_type: 'html', html: '<p>x</p>', options: { displayHeaderFooter: true, headerTemplate: '<link rel="stylesheet" href="https://example.com/a.css">' } });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'options.headerTemplate' } });
  });

  it('prints backgrounds by default and drops them with printBackground false', async () => {
    const printed = await printedWithAndWithoutBackground({ input_type: 'html', html: '<body style="background:#123456"><p>bg</p></body>' });
    expect(printed.fills).toContain('#123456');
    expect(printed.fillsWithout).not.toContain('#123456');
    expect(printed.textWithout).toBe('bg');
  });

  it('scales content: scale 2 needs more pages than scale 0.5', async () => {
    const html = Array.from({ length: 60 }, (_, i) => `<p>Line ${i}</p>`).join('');
    const big = await quick({ input_type: 'html', html, options: { scale: 2 } });
    const small = await quick({ input_type: 'html', html, options: { scale: 0.5 } });
    expect(Number(big.headers.get('x-pdf-pages'))).toBeGreaterThan(Number(small.headers.get('x-pdf-pages')));
  });

  it('honours CSS page size with preferCSSPageSize', async () => {
    const html = '<style>@page { size: 100mm 100mm; }</style><p>square</p>';
    const { pages } = await pdfOf(await quick({ input_type: 'html', html, options: { preferCSSPageSize: true } }));
    expect(pages[0].width * MM_PER_POINT).toBeCloseTo(100, 0);
    expect(pages[0].height * MM_PER_POINT).toBeCloseTo(100, 0);
  });

  it('renders a page whose script opens alert() instead of hanging', async () => {
    const { pages } = await pdfOf(await quick({ input_type: 'html', html: '<script>alert("hi")</script><p>after alert</p>' }));
    expect(pages[0].text).toContain('after alert');
  });

  it('refuses a document running many Web Audio renderings at once (each a thread beside the page, like a worker) with 400, and keeps serving', async () => {
    // Twenty OfflineAudioContexts rendering minutes of sound: twenty busy threads beside the page, none of them a
    // worker. The page then holds its load a moment (scans run every 250 ms), as a long job may for 15 minutes.
    const html = `<p>audio</p><script>
      for (let i = 0; i < 20; i++) {
        const c = new OfflineAudioContext(1, 44100 * 600, 44100);
        const o = c.createOscillator(); const v = c.createConvolver();
        v.buffer = c.createBuffer(1, 44100 * 2, 44100);
        o.connect(v); v.connect(c.destination); o.start(); c.startRendering();
      }
      for (const until = Date.now() + 2000; Date.now() < until; );
    </script>`;
    const res = await quick({ input_type: 'html', html });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'html', reason: 'too_many_audio_threads', max_audio_threads: 2 } });
    await pdfOf(await quick({ input_type: 'html', html: '<p>after</p>' }));
  });
});

describe('POST /quickjob with Markdown', () => {
  it('renders tables, code and headings without the front matter', async () => {
    const markdown = '---\ntitle: Notes\nsecret: do-not-print\n---\n# Meeting notes\n\n| Name | Role |\n|---|---|\n| Ada | Lead |\n\n```\ncode block\n```\n';
    const res = await quick({ input_type: 'markdown', markdown });
    const { pages } = await pdfOf(res);
    const text = pages.map((p) => p.text).join(' ');
    expect(text).toContain('Meeting notes');
    expect(text).toContain('Ada');
    expect(text).toContain('code block');
    expect(text).not.toContain('do-not-print');
    const job = await (await stack.request('GET', `/jobs/${res.headers.get('x-job-id')}`, { key: user.api_key })).json();
    expect(job.mode).toBe('markdown');
  });

  it('removes an empty front-matter block too: no rules printed for it', async () => {
    // The Markdown stylesheet paints <hr> (and heading borders) #d1d9e0; a bare paragraph paints nothing in it.
    const { bytes, pages } = await pdfOf(await quick({ input_type: 'markdown', markdown: '---\n---\nHello' }));
    expect(pages[0].text).toBe('Hello');
    expect((await readPdfDrawing(bytes))[0].fillColors).not.toContain('#d1d9e0');
  });

  it('prints the stylesheet\'s code and table shading by default, and drops it with printBackground false', async () => {
    const markdown = '```\ncode\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |';
    const printed = await printedWithAndWithoutBackground({ input_type: 'markdown', markdown });
    // #f6f8fa: the background of code blocks and table headers.
    expect(printed.fills).toContain('#f6f8fa');
    expect(printed.fillsWithout).not.toContain('#f6f8fa');
    expect(printed.textWithout).toBe('code a b 1 2');
  });

  it('prints the first heading as the default header\'s title, not a comment inside a code block', async () => {
    const markdown = '```bash\n# install deps\nnpm ci\n```\n\n# Setup guide\n\ntext';
    const { pages } = await pdfOf(await quick({ input_type: 'markdown', markdown, options: { displayHeaderFooter: true, footerTemplate: '' } }));
    // The default header's band, "<date> <title>", comes after the body in the page's text.
    expect(pages[0].text).toMatch(/ [AP]M Setup guide$/);
  });

  it('refuses one paragraph of megabytes (no nesting) that overflows the parser with 400 naming the long block, charging nothing', async () => {
    const before = await stack.services.accounts.get(user.account_id);
    // 1.5 million one-letter lines: 3 MB of Markdown, 4.5 MB of JSON, within both limits.
    const res = await quick({ input_type: 'markdown', markdown: 'a\n'.repeat(1_500_000) });
    expect(res.status).toBe(400);
    const { error } = await res.json();
    expect(error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'markdown', reason: 'too_deep_or_long' } });
    expect(error.message).toContain('a single block of megabytes');
    const after = await stack.services.accounts.get(user.account_id);
    expect(after!.credits_micros).toBe(before!.credits_micros);
  });

  it('refuses Markdown that keeps the parser backtracking past its deadline with 400, charging nothing', async () => {
    const before = await stack.services.accounts.get(user.account_id);
    const res = await quick({ input_type: 'markdown', markdown: '*a_'.repeat(11_000) });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'markdown', reason: 'conversion_deadline' } });
    const after = await stack.services.accounts.get(user.account_id);
    expect(after!.credits_micros).toBe(before!.credits_micros);
  });
});

describe('POST /quickjob with store: true', () => {
  it('answers JSON with a one-hour link to the stored PDF', async () => {
    const res = await quick({ input_type: 'html', html: '<p>stored</p>', store: true });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ pages: 1, truncated: false });
    expect(body.job_id).toMatch(/^job_/);
    const download = await fetch(body.download_url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');

    const job = await (await stack.request('GET', `/jobs/${body.job_id}`, { key: user.api_key })).json();
    expectHourLink(body.download_url, body.download_url_expires_at, job);
    expect(job.s3_url).toEqual(expect.stringContaining(body.job_id));
    expectHourLink(job.s3_url, job.s3_url_expires_at, job);
  });
});

describe('POST /quickjob with store: true when storage fails', () => {
  it('answers with null link fields and charges nothing: the customer cannot get that PDF', async () => {
    const before = await stack.services.accounts.get(user.account_id);
    const blobs = stack.services.blobs;
    const put = blobs.put.bind(blobs);
    blobs.put = async () => {
      throw new Error('storage unavailable');
    };
    try {
      const res = await quick({ input_type: 'html', html: '<p>unstored</p>', store: true });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body).toMatchObject({ pages: 1, truncated: false, download_url: null, download_url_expires_at: null });
      const download = await stack.request('GET', `/jobs/${body.job_id}/download`, { key: user.api_key });
      expect(download.status).toBe(404);
      expect((await download.json()).error.code).toBe('OUTPUT_NOT_AVAILABLE');
      expect(await stack.services.jobs.get(body.job_id)).toMatchObject({ status: 'completed', pages: 1 });
      const after = await stack.services.accounts.get(user.account_id);
      expect(after!.credits_micros).toBe(before!.credits_micros);
    } finally {
      blobs.put = put;
    }
  });
});

describe('POST /quickjob refusals', () => {
  it('refuses over 25 pages with PAGE_LIMIT_EXCEEDED, records a failed job and charges nothing', async () => {
    const before = await stack.services.accounts.get(user.account_id);
    const html = Array.from({ length: 30 }, (_, i) => `<div style="page-break-after:always">P${i}</div>`).join('');
    const res = await quick({ input_type: 'html', html });
    expect(res.status).toBe(400);
    const { error } = await res.json();
    expect(error).toMatchObject({ code: 'PAGE_LIMIT_EXCEEDED', details: { pages: 30, max_pages: 25, suggestion: 'use_longjob_endpoint' } });
    const job = await stack.services.jobs.get(error.details.job_id);
    expect(job).toMatchObject({ status: 'failed', error_code: 'PAGE_LIMIT_EXCEEDED', pages: 30 });
    const after = await stack.services.accounts.get(user.account_id);
    expect(after!.credits_micros).toBe(before!.credits_micros);
  });

  it('refuses a document longer than /longjob takes without printing it all, and without suggesting /longjob', async () => {
    const html = Array.from({ length: 5000 }, (_, i) => `<div style="page-break-after:always">P${i}</div>`).join('');
    const res = await quick({ input_type: 'html', html });
    expect(res.status).toBe(400);
    const { error } = await res.json();
    expect(error.code).toBe('PAGE_LIMIT_EXCEEDED');
    expect(error.details).toEqual({ job_id: expect.stringMatching(/^job_/), pages_at_least: 101, max_pages: 25 });
    expect(error.message).toMatch(/more than 100 pages.*Split the document/);
    // Printing stopped early, so the job has no exact page count to report.
    expect((await stack.services.jobs.get(error.details.job_id))?.pages ?? null).toBeNull();
  });

  it('refuses page-count bombs with PAGE_LIMIT_EXCEEDED, not a timeout or a memory failure: 100,000 forced breaks, 10 px paper', async () => {
    // Printed, these took Chromium minutes of layout or more memory than a renderer may have.
    const bombs = [
      { input_type: 'html', html: '<p style="break-after: page">x</p>'.repeat(100_000) },
      { input_type: 'html', html: `<p>${'ab '.repeat(60_000)}</p>`, options: { format: null, width: '10px', height: '10px' } },
    ];
    for (const bomb of bombs) {
      const res = await quick(bomb);
      expect(res.status).toBe(400);
      const { error } = await res.json();
      expect(error.details).toEqual({ job_id: expect.stringMatching(/^job_/), pages_at_least: 101, max_pages: 25 });
      expect(await stack.services.jobs.get(error.details.job_id)).toMatchObject({ status: 'failed', error_code: 'PAGE_LIMIT_EXCEEDED' });
    }
  }, 60_000);

  it.each<[string, number, string, unknown]>([
    ['empty body', 400, 'INVALID_PARAMETER', undefined],
    ['no input_type', 400, 'MISSING_INPUT_TYPE', { html: '<p>x</p>' }],
    ['conflicting fields', 400, 'CONFLICTING_FIELDS', { input_type: 'html', html: '<p>x</p>', markdown: '# x' }],
    ['wrong field', 400, 'WRONG_FIELD_PROVIDED', { input_type: 'markdown', html: '<p>x</p>' }],
    ['mismatched content', 400, 'CONTENT_TYPE_MISMATCH', { input_type: 'html', html: '# Title\n\n* a\n* b' }],
    ['empty content', 400, 'EMPTY_CONTENT_FIELD', { input_type: 'html', html: '' }],
    ['bad option', 400, 'INVALID_PARAMETER', { input_type: 'html', html: '<p>x</p>', options: { format: 'A9' } }],
  ])('%s → %d %s', async (_name, status, code, body) => {
    const res = body === undefined ? await stack.request('POST', '/quickjob', { key: user.api_key }) : await quick(body);
    expect(res.status).toBe(status);
    const payload = await res.json();
    expect(payload.error.code).toBe(code);
    expect(typeof payload.error.message).toBe('string');
    expect(typeof payload.error.details).toBe('object');
    expect(payload.error.details).not.toBeNull();
  });

  it('answers 402 UPGRADE_REQUIRED for a pending account', async () => {
    const pending = await stack.account({ plan_id: 'pending' });
    expect(pending.plan_id).toBe('pending');
    const res = await quick({ input_type: 'html', html: '<p>x</p>' }, pending.api_key);
    expect(res.status).toBe(402);
    expect((await res.json()).error.code).toBe('UPGRADE_REQUIRED');
  });

  it('answers 403 INSUFFICIENT_CREDITS with the spec details and records nothing charged', async () => {
    const broke = await stack.account({ credits_usd: 0 });
    const billing = async () => (await (await stack.request('GET', '/accounts/me/billing', { token: broke.id_token })).json()).billing;
    const before = await billing();
    const res = await quick({ input_type: 'html', html: '<p>x</p>' }, broke.api_key);
    expect(res.status).toBe(403);
    expect((await res.json()).error).toMatchObject({
      code: 'INSUFFICIENT_CREDITS',
      details: { current_balance: 0, required_amount: 0.01, subscription_credits_remaining: 0, action_required: 'purchase_credits' },
    });
    // Nothing charged: every balance as it was, no PDF counted, nothing spent.
    const after = await billing();
    expect(after).toEqual(before);
    expect(after).toMatchObject({ credits_balance: 0, free_credits_remaining: 0, total_pdf_count: 0, total_amount: 0 });
  });
});

describe('plans gate conversions', () => {
  beforeAll(async () => {
    const standard = (await stack.services.plans.get('standard'))!;
    await stack.services.plans.put([
      { ...standard, plan_id: 'html_only', name: 'HTML only', enabled_conversion_types: ['html'] },
      { ...standard, plan_id: 'limited', name: 'Limited', rate_limit_per_minute: 2 },
    ]);
  });

  it('answers 403 CONVERSION_TYPE_NOT_ENABLED listing the enabled types', async () => {
    const a = await stack.account({ plan_id: 'html_only', credits_usd: 1 });
    const res = await quick({ input_type: 'markdown', markdown: '# x' }, a.api_key);
    expect(res.status).toBe(403);
    expect((await res.json()).error).toMatchObject({ code: 'CONVERSION_TYPE_NOT_ENABLED', details: { enabled_types: ['html'] } });
  });

  it('answers 403 RATE_LIMIT_EXCEEDED with retry_after past the plan limit', async () => {
    const a = await stack.account({ plan_id: 'limited', credits_usd: 1 });
    // The window is the calendar minute of the service's clock: held still, the three requests share one.
    const now = new Date();
    pinned = now;
    const statuses: number[] = [];
    let refusal: any;
    try {
      for (let i = 0; i < 3; i++) {
        const res = await quick({ input_type: 'html', html: '<p>x</p>' }, a.api_key);
        statuses.push(res.status);
        if (res.status === 403) refusal = (await res.json()).error;
      }
    } finally {
      pinned = undefined;
    }
    expect(statuses).toEqual([200, 200, 403]);
    expect(refusal.code).toBe('RATE_LIMIT_EXCEEDED');
    // The rest of that minute, at least a second.
    expect(refusal.details.retry_after).toBe(Math.max(1, 60 - now.getUTCSeconds()));
  });

  it('counts the limit per calendar minute at its exact edge, across quick, long and bulk submissions', async () => {
    const a = await stack.account({ plan_id: 'limited', credits_usd: 1 });
    const bulk = { files: [{ path: 'a.html', content_base64: Buffer.from('<p>x</p>').toString('base64') }] };
    const long = { input_type: 'html', html: '<p>x</p>' };
    try {
      pinned = new Date('2031-03-01T10:15:59.999Z');
      expect((await quick({ input_type: 'html', html: '<p>x</p>' }, a.api_key)).status).toBe(200);
      expect((await stack.request('POST', '/longjob', { key: a.api_key, json: long })).status).toBe(202);
      const last = await stack.request('POST', '/bulkjob', { key: a.api_key, json: bulk });
      expect(last.status).toBe(403);
      // A millisecond of the minute is left: the answer says one second (rounded up, never 0).
      expect((await last.json()).error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { retry_after: 1, limit_per_minute: 2 } });
      // The next minute starts a fresh window.
      pinned = new Date('2031-03-01T10:16:00.000Z');
      expect((await stack.request('POST', '/bulkjob', { key: a.api_key, json: bulk })).status).toBe(202);
      expect((await quick({ input_type: 'html', html: '<p>x</p>' }, a.api_key)).status).toBe(200);
      const full = await quick({ input_type: 'html', html: '<p>x</p>' }, a.api_key);
      expect(full.status).toBe(403);
      expect((await full.json()).error.details.retry_after).toBe(60);
    } finally {
      pinned = undefined;
    }
  });

  it('converts when the rate-limit counter was written but its reply was lost (the request counts; no 500)', async () => {
    const a = await stack.account({ plan_id: 'limited', credits_usd: 1 });
    const limiter = stack.services.rateLimiter;
    const consume = limiter.consume.bind(limiter);
    const spy = jest.spyOn(limiter, 'consume').mockImplementation(async (...args) => {
      await consume(...args);
      throw new Error('socket hang up');
    });
    try {
      const res = await quick({ input_type: 'html', html: '<p>x</p>' }, a.api_key);
      expect(res.status).toBe(200);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });
});
