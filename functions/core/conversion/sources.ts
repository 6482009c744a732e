import { ServiceError } from '../errors';
import type { HttpClient } from '../net/fetch';
import { IMAGE_ADVICE, type ImageCode, type ImageOptions, type ImageType, checkImage, imagesToHtml, noUsableImages, parseImageOptions } from '../render/images';
import { markdownToHtml } from '../render/markdown';
import type { PreparedDocument } from './quickjob';
import { parseTextOptions } from './request';
import { decodeText, fetchDocument, shownReached } from './url-input';

export interface UploadedImage {
  filename: string | null;
  bytes: Buffer;
}

export interface CheckedImages {
  usable: { bytes: Buffer; type: ImageType }[];
  skipped: { index: number; filename: string | null; code: ImageCode; message: string }[];
}

/** Checks every image; unusable ones are skipped, and if none is usable the first one's code refuses the request. */
export async function checkImages(images: UploadedImage[]): Promise<CheckedImages> {
  const result: CheckedImages = { usable: [], skipped: [] };
  // One at a time: each check may inflate hundreds of MB of scanlines (counted, not kept), so no need to run them at once.
  for (const [index, image] of images.entries()) {
    const check = await checkImage(image.bytes);
    if (check.ok) result.usable.push({ bytes: check.bytes, type: check.type });
    else result.skipped.push({ index, filename: image.filename, code: check.code, message: check.message });
  }
  if (result.usable.length === 0) throw noUsableImages(result.skipped);
  return result;
}

/** Image input: one page per usable image. */
export function imageDocument(images: CheckedImages, options: ImageOptions): () => Promise<PreparedDocument> {
  return async () => ({ html: imagesToHtml(images.usable, options), options: options.pdf });
}

/**
 * URL input: fetched through the guard, then converted by what it turned out to be. The page is printed
 * from its text (no base URL), so its relative assets do not resolve; absolute ones load through the guard.
 */
export function urlDocument(http: HttpClient, url: URL, rawOptions: unknown): () => Promise<PreparedDocument> {
  return async () => {
    const doc = await fetchDocument(http, url);
    if (doc.kind === 'image') {
      const options = parseImageOptions(rawOptions);
      const check = await checkImage(doc.body);
      if (!check.ok) throw new ServiceError(check.code, `The image at the URL cannot be used: ${check.message} ${IMAGE_ADVICE[check.code]}`, { url: shownReached(doc.finalUrl, url.href) });
      return { html: imagesToHtml([{ bytes: check.bytes, type: check.type }], options), options: options.pdf };
    }
    const text = decodeText(doc);
    const documentUrl = shownReached(doc.finalUrl, url.href);
    return doc.kind === 'markdown'
      ? { html: markdownToHtml(text, { parameter: 'url' }), options: parseTextOptions('markdown', rawOptions), documentUrl }
      : { html: text, options: parseTextOptions('html', rawOptions), documentUrl };
  };
}
