import { readFileSync } from 'node:fs';
import path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';

export function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A real RGB PNG of the given size filled with one colour. */
export function png(width: number, height: number, rgb: [number, number, number] = [200, 30, 30]): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const row = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x++) row.set(rgb, 1 + x * 3);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk('IHDR', ihdr), pngChunk('IDAT', deflateSync(raw)), pngChunk('IEND', Buffer.alloc(0))]);
}

/** A small real JPEG (120×80). */
export function jpeg(): Buffer {
  return readFileSync(path.join(__dirname, '../fixtures/photo.jpg'));
}

/** The same photo, arithmetic-coded (`jpegtran -arithmetic`): a valid JPEG that Chromium draws as nothing. */
export function arithmeticJpeg(): Buffer {
  return readFileSync(path.join(__dirname, '../fixtures/photo-arithmetic.jpg'));
}

export const GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

/** A multipart body as browsers send it. */
export function multipart(fields: { name: string; value: string | Buffer; filename?: string; type?: string }[]): { body: Buffer; contentType: string } {
  const boundary = `----pdfsvc${Math.random().toString(16).slice(2)}`;
  const parts = fields.map((f) => {
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="${f.name}"${f.filename ? `; filename="${f.filename}"` : ''}\r\n${f.type ? `Content-Type: ${f.type}\r\n` : ''}\r\n`;
    return Buffer.concat([Buffer.from(head), Buffer.isBuffer(f.value) ? f.value : Buffer.from(f.value), Buffer.from('\r\n')]);
  });
  return { body: Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` };
}
