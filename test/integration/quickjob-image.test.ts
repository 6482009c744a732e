import { errorOf } from '../support/errors';
import { MM_PER_POINT, readPdf } from '../support/pdf';
import { GIF, jpeg, multipart, png } from '../support/images';
import { type TestAccount, type TestStack, startTestStack } from '../support/stack';

let stack: TestStack;
let user: TestAccount;

beforeAll(async () => {
  stack = await startTestStack();
  user = await stack.account({ credits_usd: 5 });
});
afterAll(() => stack?.stop());

type Field = Parameters<typeof multipart>[0][number];
const image = (bytes: Buffer, filename: string, type = 'image/png'): Field => ({ name: 'images', value: bytes, filename, type });

function send(fields: Field[], key = user.api_key) {
  const { body, contentType } = multipart(fields);
  return stack.request('POST', '/quickjob', { key, body, headers: { 'Content-Type': contentType } });
}


describe('POST /quickjob with images (multipart)', () => {
  it('puts each image on its own A4 page', async () => {
    const res = await send([{ name: 'input_type', value: 'image' }, image(png(400, 300), 'a.png'), image(jpeg(), 'b.jpg', 'image/jpeg')]);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-pdf-pages')).toBe('2');
    const pages = await readPdf(new Uint8Array(await res.arrayBuffer()));
    expect(pages).toHaveLength(2);
    for (const p of pages) {
      expect(p.width * MM_PER_POINT).toBeCloseTo(210, 0);
      expect(p.height * MM_PER_POINT).toBeCloseTo(297, 0);
    }
    const job = await (await stack.request('GET', `/jobs/${res.headers.get('x-job-id')}`, { key: user.api_key })).json();
    expect(job).toMatchObject({ mode: 'image', pages: 2, status: 'completed' });
  });

  it('applies format, landscape and every fit', async () => {
    for (const fit of ['contain', 'cover', 'fill', 'none']) {
      const res = await send([{ name: 'input_type', value: 'image' }, { name: 'options', value: JSON.stringify({ format: 'Letter', landscape: true, fit, margin: { top: '5mm' } }) }, image(png(50, 90), 'tall.png')]);
      expect(res.status).toBe(200);
      const [page] = await readPdf(new Uint8Array(await res.arrayBuffer()));
      expect(page.width).toBeCloseTo(11 * 72, 0);
      expect(page.height).toBeCloseTo(8.5 * 72, 0);
    }
  });

  it('skips unusable images and counts only the included ones', async () => {
    const broken = png(20, 20).subarray(0, 60);
    const res = await send([{ name: 'input_type', value: 'image' }, image(GIF, 'x.gif', 'image/gif'), image(png(20, 20), 'ok.png'), image(broken, 'broken.png')]);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-pdf-pages')).toBe('1');
  });

  it('stores the result when store is "true"', async () => {
    const res = await send([{ name: 'input_type', value: 'image' }, { name: 'store', value: 'true' }, image(png(20, 20), 'ok.png')]);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ pages: 1, truncated: false });
    expect((await fetch(body.download_url)).status).toBe(200);
  });

  it.each<[string, number, string, Field[]]>([
    ['no images', 400, 'MISSING_IMAGES', [{ name: 'input_type', value: 'image' }]],
    ['only a GIF', 400, 'INVALID_IMAGE_FORMAT', [{ name: 'input_type', value: 'image' }, image(GIF, 'x.gif', 'image/gif')]],
    ['a PNG named .jpg holding text', 400, 'INVALID_IMAGE_FORMAT', [{ name: 'input_type', value: 'image' }, image(Buffer.from('hello'), 'x.jpg', 'image/jpeg')]],
    ['only a corrupt PNG', 400, 'INVALID_IMAGE_DATA', [{ name: 'input_type', value: 'image' }, image(png(20, 20).subarray(0, 60), 'c.png')]],
    ['only a huge PNG', 400, 'IMAGE_TOO_LARGE', [{ name: 'input_type', value: 'image' }, image(png(10_001, 2), 'huge.png')]],
    ['options not JSON', 400, 'INVALID_OPTIONS_JSON', [{ name: 'input_type', value: 'image' }, { name: 'options', value: '{fit:' }, image(png(2, 2), 'a.png')]],
    ['unknown fit', 400, 'INVALID_PARAMETER', [{ name: 'input_type', value: 'image' }, { name: 'options', value: '{"fit":"zoom"}' }, image(png(2, 2), 'a.png')]],
    ['no input_type', 400, 'MISSING_INPUT_TYPE', [image(png(2, 2), 'a.png')]],
    ['html as multipart', 400, 'INVALID_PARAMETER', [{ name: 'input_type', value: 'html' }, { name: 'html', value: '<p>x</p>' }]],
    ['26 images', 400, 'INVALID_PARAMETER', [{ name: 'input_type', value: 'image' }, ...Array.from({ length: 26 }, (_, i) => image(png(2, 2), `${i}.png`))]],
    ['40 images', 400, 'INVALID_PARAMETER', [{ name: 'input_type', value: 'image' }, ...Array.from({ length: 40 }, (_, i) => image(png(2, 2), `${i}.png`))]],
  ])('%s → %d %s', async (_name, status, code, fields) => {
    expect(await errorOf(await send(fields))).toMatchObject({ status, code });
  });

  it('refuses an account that cannot pay before decoding any image (decoding 25 large images costs seconds)', async () => {
    const broke = await stack.account({ credits_usd: 0 });
    const res = await send([{ name: 'input_type', value: 'image' }, image(png(20, 20).subarray(0, 60), 'corrupt.png')], broke.api_key);
    expect(await errorOf(res)).toMatchObject({ status: 403, code: 'INSUFFICIENT_CREDITS' });
  });

  it('refuses more than about 4.5 MB of images with 413', async () => {
    const big = Buffer.alloc(1_600_000, 7); // 3 × 1.6 MB: under the 6 MB request cap, over the image budget
    const res = await send([{ name: 'input_type', value: 'image' }, image(big, 'a.png'), image(big, 'b.png'), image(big, 'c.png')]);
    expect(await errorOf(res)).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
  });

  it('refuses a malformed multipart body', async () => {
    const res = await stack.request('POST', '/quickjob', { key: user.api_key, body: '--nope\r\ngarbage', headers: { 'Content-Type': 'multipart/form-data; boundary=xyz' } });
    expect(await errorOf(res)).toMatchObject({ status: 400, code: 'INVALID_MULTIPART' });
  });
});
