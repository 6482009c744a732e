import { attachment, json, pdf, preflightHeaders, toProxyResult } from '../../../functions/http/responses';

describe('attachment (Content-Disposition)', () => {
  it('gives an ASCII fallback and the UTF-8 form of any name', () => {
    expect(attachment('Grüße "2026".pdf')).toBe(`attachment; filename="Gru_e _2026_.pdf"; filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%222026%22.pdf`);
  });

  it('never throws on half a surrogate pair (it used to, after the charge)', () => {
    expect(attachment('x\ud800.pdf')).toBe(`attachment; filename="x_.pdf"; filename*=UTF-8''x_.pdf`);
    expect(attachment('😀.pdf')).toContain("filename*=UTF-8''%F0%9F%98%80.pdf");
  });
});

describe('toProxyResult', () => {
  it('tells caches to store nothing: a new API key, a webhook secret or a signed link must not outlive the answer', () => {
    expect(toProxyResult(json(201, { api_key: 'pk_x' }), 'req_1').headers).toMatchObject({ 'Cache-Control': 'no-store', 'X-Request-Id': 'req_1' });
    expect(toProxyResult(pdf(new Uint8Array([37, 80]), {}), 'req_2').headers).toMatchObject({ 'Cache-Control': 'no-store' });
  });
});

describe('toProxyResult headers and bodies', () => {
  it('sends binary bodies base64-encoded, only the bytes of the view even when it shares a larger buffer', () => {
    const whole = Buffer.from('xxxx%PDF-1.7 body yyyy');
    const view = whole.subarray(4, 18);
    const result = toProxyResult(pdf(view, { 'Content-Disposition': attachment('a.pdf') }), 'req_3');
    expect(result.isBase64Encoded).toBe(true);
    expect(Buffer.from(result.body, 'base64').toString()).toBe('%PDF-1.7 body ');
    expect(result.headers).toMatchObject({ 'Content-Type': 'application/pdf', 'Content-Length': '14', 'Content-Disposition': 'attachment; filename="a.pdf"; filename*=UTF-8\'\'a.pdf' });
  });

  it('sends text bodies as they are, with the handler\'s headers, CORS for the dashboard and the request id it may read', () => {
    const result = toProxyResult(json(404, { error: 'x' }, { 'X-Job-Id': 'job_1' }), 'req_4');
    expect(result.isBase64Encoded).toBeUndefined();
    expect(result.body).toBe('{"error":"x"}');
    expect(result.headers).toMatchObject({ 'Content-Type': 'application/json', 'X-Job-Id': 'job_1', 'X-Request-Id': 'req_4', 'Access-Control-Allow-Origin': '*' });
    expect(String(result.headers!['Access-Control-Expose-Headers']).split(', ')).toEqual(expect.arrayContaining(['X-Request-Id', 'X-Job-Id', 'Content-Disposition']));
    expect(toProxyResult({ statusCode: 204 }, 'req_5')).toMatchObject({ statusCode: 204, body: '' });
  });

  it('answers a preflight with the credential headers a browser client sends', () => {
    expect(preflightHeaders('/quickjob')['Access-Control-Allow-Headers'].split(',')).toEqual(expect.arrayContaining(['Content-Type', 'Authorization', 'X-API-Key']));
  });
});
