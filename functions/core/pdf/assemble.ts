import type { PDFRef } from 'pdf-lib';
import { PageCopier, type SourceDocument } from './copier';
import { Deadline, OutputBudgetExceeded } from './errors';
import { type PdfWarning, orderWarnings } from './features';
import { OutputDocument } from './writer';

/** One page of the output: page `page` (0-based) of `source`. */
export interface PageSelection {
  source: SourceDocument;
  page: number;
}

export interface AssembledPdf {
  bytes: Uint8Array;
  pages: number;
  warnings: PdfWarning[];
}

export interface AssembleOptions {
  title?: string;
  deadline?: Deadline;
  /** Called after each copied page (progress). */
  onPage?: () => void;
  /** Bytes this file may take: past them copying stops with OutputBudgetExceeded instead of building on. */
  maxBytes?: number;
  /** Objects this file may hold: past them copying stops with OutputBudgetExceeded('objects'). */
  maxObjects?: number;
}

/** Pages copied between yields to the event loop (so progress writes and timers run during long merges). */
const PAGES_PER_TICK = 50;

/** Builds one PDF from pages of one or more sources, in the order given (repeats allowed). */
export async function assemble(selections: PageSelection[], opts: AssembleOptions = {}): Promise<AssembledPdf> {
  const deadline = opts.deadline ?? Deadline.none();
  const out = new OutputDocument({ deadline, maxObjects: opts.maxObjects });
  const copiers = new Map<SourceDocument, PageCopier>();
  const copierFor = (source: SourceDocument) => {
    let c = copiers.get(source);
    if (!c) {
      c = new PageCopier(out, source);
      copiers.set(source, c);
    }
    return c;
  };
  // Allocate every page first so links can point forward to pages not copied yet.
  const planned: { copier: PageCopier; selection: PageSelection; ref: PDFRef }[] = selections.map((selection) => {
    const copier = copierFor(selection.source);
    const ref = out.alloc();
    copier.plan(selection.source.pages[selection.page], ref);
    return { copier, selection, ref };
  });
  const warnings = new Set<PdfWarning>();
  let copied = 0;
  for (const { copier, selection, ref } of planned) {
    deadline.check();
    if (++copied % PAGES_PER_TICK === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const { hadFormFields } = copier.copyPage(selection.source.pages[selection.page], ref);
    // A page repeated with heavy direct data (page keys, annotations) grows the file with every copy.
    if (opts.maxBytes !== undefined && out.bytesSoFar > opts.maxBytes) throw new OutputBudgetExceeded();
    if (hadFormFields) warnings.add('FORM_FIELDS_NOT_PRESERVED');
    out.addPage(ref);
    opts.onPage?.();
  }
  for (const source of copiers.keys()) {
    const f = source.features();
    // An XFA form lives beside the pages, not in their widgets: none of its fields is fillable in the output.
    if (f.xfa) warnings.add('FORM_FIELDS_NOT_PRESERVED');
    if (f.hasBookmarks) warnings.add('BOOKMARKS_NOT_PRESERVED');
    if (f.signed) warnings.add('SIGNATURE_INVALIDATED');
  }
  const groups: PDFRef[] = [];
  const hidden: PDFRef[] = [];
  for (const copier of copiers.values()) {
    const oc = copier.optionalContent();
    groups.push(...oc.groups);
    hidden.push(...oc.hidden);
  }
  out.setOptionalContent(groups, hidden);
  if (opts.title) out.setTitle(opts.title);
  deadline.check();
  const bytes = out.save();
  // Writing a large file takes time too: a file finished after the deadline is not delivered.
  deadline.check();
  return { bytes, pages: out.pageCount, warnings: orderWarnings(warnings) };
}
