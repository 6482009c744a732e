/**
 * Links between the files of a bulk job. A page printed with a link to another document of the bundle
 * (`<a href="guide/intro.html#setup">`) has it as a web link to that document's bundle URL; once the output names are
 * known, it is pointed at the PDF the document became, by its path in the output ZIP relative to the linking PDF
 * (`guide/intro.pdf`), so it works wherever the ZIP is unpacked. It opens at the element the link names when that PDF
 * has it as a named destination (the renderer names one for each element with an id), else at its first page. Links
 * to documents that made no PDF are removed; their text stays.
 */
import { posix } from 'node:path';
import type { JobFileRow } from '../jobs/files';
import { type FileLinkTarget, hasNamedDestination, retargetLinks } from '../pdf/links';
import { bundlePathOf } from '../render/bundle-url';
import { BUNDLE_ORIGIN } from '../render/ports';
import { type BundleIndex, bundleDocumentAt } from './storage';

/**
 * Points the links of `pdfs` (those of the `made` rows, whose `output` is set) to other documents at those documents'
 * PDFs, replacing them in the array (a whole job's PDFs are in memory: a printed copy is not kept beside its
 * rewritten one). A PDF whose links cannot be rewritten is kept as printed (`onError` is told).
 */
export function linkDocumentPdfs(bundle: BundleIndex, made: readonly JobFileRow[], pdfs: Uint8Array[], onError: (row: JobFileRow, err: unknown) => void): void {
  const madeByIndex = new Map(made.map((row, i) => [row.index, i]));
  const destinations = new Map<number, (name: string) => boolean>();
  const hasDestination = (i: number, name: string) => {
    try {
      let has = destinations.get(i);
      if (!has) destinations.set(i, (has = hasNamedDestination(pdfs[i])));
      return has(name);
    } catch {
      return false; // a PDF whose destinations cannot be read is linked at its first page
    }
  };
  const targetOf = (from: JobFileRow, uri: string): FileLinkTarget | null => {
    const path = bundlePathOf(uri);
    const document = path === null ? undefined : bundleDocumentAt(bundle, path);
    const i = document === undefined ? undefined : madeByIndex.get(document.index);
    if (i === undefined) return null;
    return {
      file: posix.relative(posix.dirname(from.output!), made[i].output!),
      destination: destinationNames(uri).find((name) => hasDestination(i, name)) ?? null,
    };
  };
  made.forEach((row, i) => {
    if (!row.document_links) return;
    try {
      pdfs[i] = retargetLinks(pdfs[i], `${BUNDLE_ORIGIN}/`, (uri) => targetOf(row, uri));
    } catch (err) {
      onError(row, err);
    }
  });
}

/**
 * The names a link's fragment may have as a named destination: Chromium names one by the fragment as the URL has it
 * (`#na%20me`: `/na#2520me`); a writer that decodes it first, by the id's UTF-8 bytes (a PDF name is bytes; pdf-lib
 * reads and writes names one character per byte). None without a fragment.
 */
function destinationNames(uri: string): string[] {
  const hash = uri.indexOf('#');
  if (hash < 0 || hash === uri.length - 1) return [];
  const fragment = uri.slice(hash + 1);
  try {
    return [fragment, Buffer.from(decodeURIComponent(fragment), 'utf8').toString('latin1')];
  } catch {
    return [fragment];
  }
}
