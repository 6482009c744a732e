/**
 * Copies pages from a source document into an output document without re-rendering anything.
 *
 * - One copier per (source, output): every object reached from the copied pages is copied once, so fonts,
 *   images and other shared resources appear once per output however many pages use them.
 * - The page tree, the catalog, other pages, the structure tree, the form and the outline are never
 *   followed: a reference to them becomes null, so one page never drags in the rest of its document.
 * - A page used twice becomes two page objects sharing content and resources; each gets its own annotations.
 * - Annotations are kept with /P pointing at the new page. Internal links are re-pointed at the copied
 *   target page, or dropped when the target is not part of the output. Form widgets are flattened: their
 *   current appearance is drawn into the page (shown, no longer fillable).
 */
import { PDFArray, PDFDict, PDFName, PDFNull, PDFNumber, type PDFObject, PDFRawStream, PDFRef, PDFString, PDFHexString, numberToString } from 'pdf-lib';
import { type InputRef, ReadBudgetExceeded, inputProblem, passDeadline } from './errors';
import { type DocFeatures, detectFeatures, inheritedField } from './features';
import { N, type PageInfo, type PdfReader, numberOf } from './reader';
import type { OutputDocument } from './writer';

const K = {
  Annots: PDFName.of('Annots'),
  B: PDFName.of('B'),
  StructParents: PDFName.of('StructParents'),
  StructParent: PDFName.of('StructParent'),
  Subtype: PDFName.of('Subtype'),
  Widget: PDFName.of('Widget'),
  Link: PDFName.of('Link'),
  P: PDFName.of('P'),
  A: PDFName.of('A'),
  S: PDFName.of('S'),
  D: PDFName.of('D'),
  Dest: PDFName.of('Dest'),
  GoTo: PDFName.of('GoTo'),
  FT: PDFName.of('FT'),
  Sig: PDFName.of('Sig'),
  F: PDFName.of('F'),
  AP: PDFName.of('AP'),
  AS: PDFName.of('AS'),
  Rect: PDFName.of('Rect'),
  BBox: PDFName.of('BBox'),
  Matrix: PDFName.of('Matrix'),
  Contents: PDFName.of('Contents'),
  XObject: PDFName.of('XObject'),
  Form: PDFName.of('Form'),
  Kids: PDFName.of('Kids'),
  Limits: PDFName.of('Limits'),
  Names: PDFName.of('Names'),
  Dests: PDFName.of('Dests'),
  Metadata: PDFName.of('Metadata'),
  OCProperties: PDFName.of('OCProperties'),
  OCGs: PDFName.of('OCGs'),
  BaseState: PDFName.of('BaseState'),
  ON: PDFName.of('ON'),
  OFF: PDFName.of('OFF'),
} as const;

// A page (a leaf of the page tree, whatever else it says) never keeps the keys of a tree node: copied, /Kids made the
// output's page a node of its page tree (qpdf: a loop in /Pages, or a page that is not a page).
const SKIP_PAGE_KEYS = new Set<PDFName>([N.Parent, N.Type, N.Kids, N.Count, K.Annots, K.B, K.StructParents]);
const SKIP_ANNOT_KEYS = new Set<PDFName>([K.P, K.StructParent]);

/** Streams a page's copies carry: its own content streams, and the streams its resources reach (shared between pages). */
export interface PageStreams {
  own: readonly [PDFRef, number][];
  shared: readonly [PDFRef, number][];
}

/** Streams of one kind looked at per page, at most: enough for any real page, and a floor stays a floor when cut. */
const PAGE_STREAMS_MAX = 10_000;
/** Objects looked at to find the streams under one resources dictionary, and under all of a document's. */
const RESOURCE_VISITS_MAX = 200_000;
const DOCUMENT_RESOURCE_VISITS_MAX = 1_000_000;
/** Entries of an explicit destination: the page, the fit type and up to four numbers (`[page /FitR left bottom right top]`). */
const MAX_DESTINATION_LENGTH = 6;
/** Kid references read while loading the named-destination tree (a real tree has one per node). */
const MAX_NAME_TREE_REFERENCES = 1_000_000;

/** A loaded input document, shared by every output that uses its pages. */
export class SourceDocument {
  private featureCache: DocFeatures | null = null;
  private pageRefSet: Set<PDFRef> | null = null;
  private blockedSet: Set<PDFRef> | null = null;
  private namedDests: Map<string, PDFObject> | null = null;
  private readonly streamsOfPage = new Map<number, PageStreams>();
  private readonly streamsOfResources = new Map<PDFDict, [PDFRef, number][]>();
  /** Objects looked at so far by `streamsUnder`, across all of this document's resources. */
  private resourceVisits = 0;

  constructor(
    readonly reader: PdfReader,
    readonly input: InputRef,
  ) {}

  get pages(): PageInfo[] {
    return this.reader.pages();
  }

  features(): DocFeatures {
    this.featureCache ??= detectFeatures(this.reader);
    return this.featureCache;
  }

  /** References of every page of the source. */
  pageRefs(): Set<PDFRef> {
    if (!this.pageRefSet) {
      this.pageRefSet = new Set();
      for (const p of this.pages) if (p.ref) this.pageRefSet.add(p.ref);
    }
    return this.pageRefSet;
  }

  /** Document-level structures no copied object may pull in. */
  blocked(): Set<PDFRef> {
    if (!this.blockedSet) {
      const set = new Set<PDFRef>(this.reader.treeNodeRefs());
      set.add(this.reader.catalogRef);
      const catalog = this.reader.catalog;
      for (const key of [N.StructTreeRoot, N.AcroForm, N.Outlines, N.Names, N.Dests, N.Perms, K.Metadata, K.OCProperties]) {
        const v = catalog.get(key);
        if (v instanceof PDFRef) set.add(v);
      }
      this.blockedSet = set;
    }
    return this.blockedSet;
  }

  /**
   * Streams every copy of the page carries, with their stored sizes: its content streams (`own`) and every stream its
   * resources reach (`shared`: one list per resources, the same array for every page that shares them, at most
   * PAGE_STREAMS_MAX long; see `streamsUnder`). Copies keep stream data as stored, so these sizes are a floor for the page's
   * share of an output. A damaged object adds nothing here (copying it reports the damage).
   */
  pageStreams(index: number): PageStreams {
    let streams = this.streamsOfPage.get(index);
    if (streams) return streams;
    const r = this.reader;
    const sized = (ref: PDFObject | undefined): [PDFRef, number] | null => {
      if (!(ref instanceof PDFRef)) return null;
      if (this.pageRefs().has(ref) || this.blocked().has(ref)) return null;
      const stream = r.lookupRef(ref);
      return stream instanceof PDFRawStream ? [ref, stream.contents.length] : null;
    };
    const own: [PDFRef, number][] = [];
    let shared: readonly [PDFRef, number][] = [];
    try {
      const page = this.pages[index];
      const contents = page.dict.get(K.Contents);
      const list = contents instanceof PDFRef ? r.lookupRef(contents) : contents;
      for (const item of list instanceof PDFArray ? list.asArray().slice(0, PAGE_STREAMS_MAX) : [contents]) {
        const entry = sized(item);
        if (entry) own.push(entry);
      }
      const resources = r.resolve(page.resources);
      if (resources instanceof PDFDict) {
        let found = this.streamsOfResources.get(resources);
        if (!found) this.streamsOfResources.set(resources, (found = this.streamsUnder(resources)));
        shared = found;
      }
    } catch (err) {
      // Past the read budget: refused here, naming this input (planning, where this runs, names no input itself).
      if (err instanceof ReadBudgetExceeded) throw inputProblem(err, this.input);
      passDeadline(err);
      // Left to the copy, which names the damaged input.
    }
    streams = { own, shared };
    this.streamsOfPage.set(index, streams);
    return streams;
  }

  /**
   * Every stream a copy of these resources brings along (the copy follows every reference but pages and document
   * structures): images, fonts and their files, patterns, shadings, and Form XObjects with their own resources, however
   * deep. Bounded per resources and per document; what is found within the bounds is still a floor.
   */
  private streamsUnder(resources: PDFDict): [PDFRef, number][] {
    const r = this.reader;
    const found: [PDFRef, number][] = [];
    const seenRefs = new Set<PDFRef>();
    const stack: PDFObject[] = [resources];
    let visits = 0;
    while (stack.length > 0 && found.length < PAGE_STREAMS_MAX && visits < RESOURCE_VISITS_MAX && this.resourceVisits < DOCUMENT_RESOURCE_VISITS_MAX) {
      visits++;
      this.resourceVisits++;
      let obj = stack.pop()!;
      if (obj instanceof PDFRef) {
        if (seenRefs.has(obj) || this.pageRefs().has(obj) || this.blocked().has(obj)) continue;
        seenRefs.add(obj);
        let target: PDFObject | null;
        try {
          target = r.lookupRef(obj);
        } catch (err) {
          if (err instanceof ReadBudgetExceeded) throw err;
          passDeadline(err);
          continue; // a damaged object adds nothing (copying it reports the damage)
        }
        if (target === null) continue;
        if (target instanceof PDFRawStream) found.push([obj, target.contents.length]);
        obj = target;
      }
      if (obj instanceof PDFRawStream) obj = obj.dict;
      if (obj instanceof PDFDict) for (const [, value] of obj.entries()) stack.push(value);
      else if (obj instanceof PDFArray) for (let i = 0; i < obj.size(); i++) stack.push(obj.get(i));
    }
    return found;
  }

  /** A named destination (catalog /Dests or the /Names /Dests name tree). */
  namedDestination(name: string): PDFObject | undefined {
    return this.namedDestinations().get(name);
  }

  /** The names of the named destinations. */
  namedDestinationNames(): string[] {
    return [...this.namedDestinations().keys()];
  }

  /** Named destinations by name, read once on first use, within MAX_NAME_TREE_REFERENCES. */
  private namedDestinations(): Map<string, PDFObject> {
    if (!this.namedDests) {
      const map = new Map<string, PDFObject>();
      const r = this.reader;
      const oldStyle = r.get(r.catalog, K.Dests, PDFDict);
      if (oldStyle) for (const [k, v] of oldStyle.entries()) map.set(k.decodeText(), v);
      const names = r.get(r.catalog, K.Names, PDFDict);
      const root = r.get(names, K.Dests, PDFDict);
      const stack: { node: PDFDict; depth: number }[] = root ? [{ node: root, depth: 0 }] : [];
      const seen = new Set<PDFDict>();
      let references = 0;
      while (stack.length && map.size < 200_000) {
        const { node, depth } = stack.pop()!;
        if (seen.has(node) || depth > 32) continue;
        seen.add(node);
        const pairs = r.get(node, K.Names, PDFArray);
        if (pairs) {
          for (let i = 0; i + 1 < pairs.size(); i += 2) {
            const key = r.resolve(pairs.get(i));
            if (key instanceof PDFString || key instanceof PDFHexString) map.set(bytesKey(key), pairs.get(i + 1));
          }
        }
        const kids = r.get(node, K.Kids, PDFArray);
        // Visited nodes are not stacked again, and the references read are bounded: a name tree whose nodes share one
        // /Kids array of all of them would otherwise cost N² steps.
        if (kids) for (const kid of kids.asArray()) {
          if (++references > MAX_NAME_TREE_REFERENCES) break;
          const k = r.resolve(kid);
          if (k instanceof PDFDict && !seen.has(k)) stack.push({ node: k, depth: depth + 1 });
        }
      }
      this.namedDests = map;
    }
    return this.namedDests;
  }
}

function bytesKey(s: PDFString | PDFHexString): string {
  return Buffer.from(s.asBytes()).toString('latin1');
}

export interface PageCopyResult {
  /** The page had fillable (non-signature) form widgets, now flattened. */
  hadFormFields: boolean;
}

/** Copies pages of one source into one output. */
export class PageCopier {
  private readonly shared = new Map<PDFRef, PDFRef>();
  private readonly sharedDirect = new Map<PDFObject, PDFRef>();
  private readonly queue: [PDFRef, PDFRef][] = [];
  /** Source page → the first copy of it in this output (link targets). */
  readonly pageMap = new Map<PDFRef, PDFRef>();
  /** Appearance streams used as form XObjects: make sure they say so once copied. */
  private readonly formXObjects = new Set<PDFRef>();
  private readonly reader: PdfReader;

  constructor(
    private readonly out: OutputDocument,
    readonly source: SourceDocument,
  ) {
    this.reader = source.reader;
  }

  /**
   * The optional content groups (layers) the copied pages brought into the output, and those of them the source's
   * default configuration hides (its /D: listed in /OFF, or not in /ON under /BaseState /OFF). The catalog's
   * /OCProperties is not followed while copying, and without one in the output every layer would show: content the
   * source hides by default (an answer key, a print-only stamp) became visible.
   */
  optionalContent(): { groups: PDFRef[]; hidden: PDFRef[] } {
    const r = this.reader;
    const props = r.get(r.catalog, K.OCProperties, PDFDict);
    const groups: PDFRef[] = [];
    const hidden: PDFRef[] = [];
    const ocgs = props && r.get(props, K.OCGs, PDFArray);
    if (!props || !ocgs) return { groups, hidden };
    const d = r.get(props, K.D, PDFDict);
    const refsIn = (key: PDFName) => {
      const list = d && r.get(d, key, PDFArray);
      return new Set(list ? list.asArray().filter((v): v is PDFRef => v instanceof PDFRef) : []);
    };
    const on = refsIn(K.ON);
    const off = refsIn(K.OFF);
    const baseOff = d !== undefined && r.resolve(d.get(K.BaseState)) === K.OFF;
    const seen = new Set<PDFRef>();
    for (const entry of ocgs.asArray()) {
      if (!(entry instanceof PDFRef) || seen.has(entry)) continue;
      seen.add(entry);
      const copied = this.shared.get(entry);
      if (!copied) continue;
      groups.push(copied);
      if (baseOff ? !on.has(entry) : off.has(entry)) hidden.push(copied);
    }
    return { groups, hidden };
  }

  /** Maps a source page to its (first) destination reference before any page is copied. */
  plan(page: PageInfo, dest: PDFRef): void {
    if (page.ref && !this.pageMap.has(page.ref)) this.pageMap.set(page.ref, dest);
  }

  private mapRef(ref: PDFRef, overlay?: Map<PDFRef, PDFObject>): PDFObject {
    const o = overlay?.get(ref);
    if (o !== undefined) return o;
    const page = this.pageMap.get(ref);
    if (page) return page;
    if (this.source.pageRefs().has(ref) || this.source.blocked().has(ref)) return PDFNull;
    let dest = this.shared.get(ref);
    if (!dest) {
      dest = this.out.alloc();
      this.shared.set(ref, dest);
      this.queue.push([ref, dest]);
    }
    return dest;
  }

  /** A copy of a value for the output: containers rebuilt, references mapped, primitives shared. */
  copy(obj: PDFObject, overlay?: Map<PDFRef, PDFObject>): PDFObject {
    if (obj instanceof PDFRef) return this.mapRef(obj, overlay);
    if (obj instanceof PDFRawStream) {
      // /Length is rewritten from the data when the stream is written; an indirect one is not worth copying.
      const d = this.out.dict();
      for (const [k, v] of obj.dict.entries()) if (k !== N.Length) d.set(k, this.copy(v, overlay));
      return PDFRawStream.of(d, obj.contents);
    }
    if (obj instanceof PDFDict) {
      const d = this.out.dict();
      for (const [k, v] of obj.entries()) d.set(k, this.copy(v, overlay));
      return d;
    }
    if (obj instanceof PDFArray) {
      const a = this.out.array();
      for (let i = 0; i < obj.size(); i++) a.push(this.copy(obj.get(i), overlay));
      return a;
    }
    return obj;
  }

  /** Copies everything the copied values referred to (iteratively: no recursion through references). */
  drain(): void {
    while (this.queue.length) {
      const [src, dest] = this.queue.pop()!;
      const obj = this.reader.lookupRef(src);
      this.out.assign(dest, obj === null ? PDFNull : this.copy(obj));
    }
    for (const ref of this.formXObjects) {
      const obj = this.out.get(ref);
      if (obj instanceof PDFRawStream) {
        obj.dict.set(N.Type, K.XObject);
        obj.dict.set(K.Subtype, K.Form);
      }
    }
    this.formXObjects.clear();
  }

  /** An inherited value: a direct dictionary on a page-tree node is copied once and shared by reference. */
  private copyInherited(value: PDFObject): PDFObject {
    if (value instanceof PDFRef) return this.mapRef(value);
    if (value instanceof PDFDict || value instanceof PDFArray) {
      let ref = this.sharedDirect.get(value);
      if (!ref) {
        ref = this.out.register(this.copy(value));
        this.sharedDirect.set(value, ref);
      }
      return ref;
    }
    return value;
  }

  copyPage(page: PageInfo, dest: PDFRef): PageCopyResult {
    const out = this.out;
    const d = out.dict();
    for (const [k, v] of page.dict.entries()) {
      if (SKIP_PAGE_KEYS.has(k)) continue;
      if (k === K.Contents) {
        const contents = this.copyContents(v);
        if (contents) d.set(k, contents);
      } else d.set(k, this.copy(v));
    }
    d.set(N.Type, N.Page);
    d.set(N.Parent, out.pagesRef);
    if (!d.has(N.Resources)) d.set(N.Resources, page.resources !== undefined ? this.copyInherited(page.resources) : out.dict());
    if (!d.has(N.MediaBox)) d.set(N.MediaBox, page.mediaBox !== undefined ? this.copyInherited(page.mediaBox) : out.array([0, 0, 612, 792].map((n) => PDFNumber.of(n))));
    if (!d.has(N.CropBox) && page.cropBox !== undefined) d.set(N.CropBox, this.copyInherited(page.cropBox));
    if (!d.has(N.Rotate) && page.rotate !== undefined) d.set(N.Rotate, this.copy(page.rotate));

    const result = this.copyAnnotations(page, dest, d);
    out.assign(dest, d);
    this.drain();
    return result;
  }

  /** The content streams a page's /Contents names: a single stream, or the streams of its array. */
  private contentStreams(value: PDFObject | undefined): PDFObject[] {
    const r = this.reader;
    const resolved = r.resolve(value);
    if (resolved instanceof PDFRawStream) return [value!];
    if (!(resolved instanceof PDFArray)) return [];
    return resolved.asArray().filter((item) => r.resolve(item) instanceof PDFRawStream);
  }

  /**
   * A page's /Contents as copied: as it is when it names only streams; otherwise the streams it names, or nothing. A
   * reference to the page tree, the catalog or another page (or to no object) became null or a page in the output's
   * /Contents, which qpdf refuses.
   */
  private copyContents(value: PDFObject): PDFObject | null {
    const streams = this.contentStreams(value);
    const resolved = this.reader.resolve(value);
    if (resolved instanceof PDFRawStream || (resolved instanceof PDFArray && streams.length === resolved.size())) return this.copy(value);
    return streams.length ? this.out.array(streams.map((c) => this.copy(c))) : null;
  }

  // ---- annotations ----------------------------------------------------------------------------------

  private copyAnnotations(page: PageInfo, dest: PDFRef, d: PDFDict): PageCopyResult {
    const r = this.reader;
    const annots = r.get(page.dict, K.Annots, PDFArray);
    if (!annots || annots.size() === 0) return { hadFormFields: false };

    const overlay = new Map<PDFRef, PDFObject>();
    if (page.ref) overlay.set(page.ref, dest);
    type Plan = { src: PDFObject; dict: PDFDict; kind: 'keep' | 'link'; link?: PDFArray; ref: PDFRef | null };
    const kept: Plan[] = [];
    const widgets: PDFDict[] = [];
    let hadFormFields = false;

    const listed = new Set<PDFRef>();
    for (const entry of annots.asArray()) {
      // An annotation listed twice (under any generation: see ObjectParser) is one annotation.
      if (entry instanceof PDFRef) {
        if (listed.has(entry)) continue;
        listed.add(entry);
      }
      const annot = r.resolve(entry);
      if (!(annot instanceof PDFDict)) continue;
      const subtype = annot.get(K.Subtype);
      if (subtype === K.Widget) {
        widgets.push(annot);
        if (inheritedField(r, annot, K.FT) !== K.Sig) hadFormFields = true;
        if (entry instanceof PDFRef) overlay.set(entry, PDFNull);
        continue;
      }
      let link: PDFArray | undefined;
      if (subtype === K.Link) {
        const target = this.linkTarget(annot);
        if (target === 'drop') {
          if (entry instanceof PDFRef) overlay.set(entry, PDFNull);
          continue;
        }
        link = target ?? undefined;
      }
      const ref = entry instanceof PDFRef ? this.out.alloc() : null;
      if (entry instanceof PDFRef && ref) overlay.set(entry, ref);
      kept.push({ src: entry, dict: annot, kind: link ? 'link' : 'keep', link, ref });
    }

    const newAnnots = this.out.array();
    for (const plan of kept) {
      const copy = this.out.dict();
      for (const [k, v] of plan.dict.entries()) {
        if (SKIP_ANNOT_KEYS.has(k)) continue;
        if (plan.kind === 'link' && (k === K.A || k === K.Dest)) continue;
        copy.set(k, this.copy(v, overlay));
      }
      copy.set(K.P, dest);
      if (plan.link) copy.set(K.Dest, plan.link);
      if (plan.ref) {
        this.out.assign(plan.ref, copy);
        newAnnots.push(plan.ref);
      } else {
        newAnnots.push(copy);
      }
    }
    if (newAnnots.size() > 0) d.set(K.Annots, newAnnots);
    if (widgets.length) this.flatten(widgets, page, d);
    return { hadFormFields };
  }

  /**
   * Where an internal link goes in the output: the rewritten destination array, null for links that
   * are not internal (URI, launch, named actions… kept as they are), or 'drop' when the target page
   * is not in this output (or the destination cannot be resolved).
   */
  private linkTarget(annot: PDFDict): PDFArray | null | 'drop' {
    const r = this.reader;
    let dest: PDFObject | undefined;
    const action = r.get(annot, K.A, PDFDict);
    if (action) {
      if (action.get(K.S) !== K.GoTo) return null;
      dest = r.resolve(action.get(K.D));
    } else {
      dest = r.resolve(annot.get(K.Dest));
      if (dest === undefined) return null;
    }
    if (dest instanceof PDFName) dest = r.resolve(this.source.namedDestination(dest.decodeText()));
    else if (dest instanceof PDFString || dest instanceof PDFHexString) dest = r.resolve(this.source.namedDestination(bytesKey(dest)));
    if (dest instanceof PDFDict) dest = r.resolve(dest.get(K.D));
    if (!(dest instanceof PDFArray) || dest.size() === 0) return 'drop';
    const first = dest.get(0);
    let target: PDFRef | undefined;
    if (first instanceof PDFRef) target = this.pageMap.get(first);
    else if (first instanceof PDFNumber) {
      const page = this.source.pages[first.asNumber()];
      target = page?.ref ? this.pageMap.get(page.ref) : undefined;
    }
    if (!target) return 'drop';
    // An explicit destination is the page, a fit type and at most four numbers (/FitR; PDF 32000-1, 12.3.2.2). Each link
    // gets its own copy, so anything past that is dropped: a few KB naming one destination of a million numbers from a
    // hundred links filled gigabytes.
    const rewritten = this.out.array([target]);
    for (let i = 1; i < Math.min(dest.size(), MAX_DESTINATION_LENGTH); i++) rewritten.push(this.copy(dest.get(i)));
    return rewritten;
  }

  /** Draws each visible widget's current appearance into the page (PDF 32000-1, 12.5.5), then forgets the widget. */
  private flatten(widgets: PDFDict[], page: PageInfo, d: PDFDict): void {
    const r = this.reader;
    const draws: string[] = [];
    // The page gets its own resource dictionaries (the originals may be shared with other pages);
    // the resources inside them stay shared references.
    const srcResources = r.resolve(page.dict.get(N.Resources) ?? page.resources);
    const ownResources = this.out.dict();
    const xobjects = this.out.dict();
    if (srcResources instanceof PDFDict) {
      for (const [k, v] of srcResources.entries()) if (k !== K.XObject) ownResources.set(k, this.copy(v));
      const srcX = r.get(srcResources, K.XObject, PDFDict);
      if (srcX) for (const [k, v] of srcX.entries()) xobjects.set(k, this.copy(v));
    }

    let counter = 0;
    for (const w of widgets) {
      const flags = numberOf(r.resolve(w.get(K.F))) ?? 0;
      if (flags & 2 || flags & 32) continue; // hidden or no-view
      const ap = r.get(w, K.AP, PDFDict);
      let normal = ap?.get(N.N);
      let normalResolved = r.resolve(normal);
      if (normalResolved instanceof PDFDict) {
        const state = r.resolve(w.get(K.AS));
        if (!(state instanceof PDFName)) continue;
        normal = normalResolved.get(state);
        normalResolved = r.resolve(normal);
      }
      if (!(normalResolved instanceof PDFRawStream)) continue;
      const rect = numbers(r.resolve(w.get(K.Rect)), 4);
      const bbox = numbers(r.resolve(normalResolved.dict.get(K.BBox)), 4);
      if (!rect || !bbox) continue;
      const matrix = numbers(r.resolve(normalResolved.dict.get(K.Matrix)), 6) ?? [1, 0, 0, 1, 0, 0];
      const t = transformedBox(bbox, matrix);
      const [x1, y1, x2, y2] = [Math.min(rect[0], rect[2]), Math.min(rect[1], rect[3]), Math.max(rect[0], rect[2]), Math.max(rect[1], rect[3])];
      const tw = t[2] - t[0];
      const th = t[3] - t[1];
      if (Math.abs(tw) < 1e-9 || Math.abs(th) < 1e-9) continue;
      const a = (x2 - x1) / tw;
      const dd = (y2 - y1) / th;
      const mapped = normal instanceof PDFRef ? this.mapRef(normal) : this.out.register(this.copy(normalResolved));
      if (!(mapped instanceof PDFRef)) continue;
      this.formXObjects.add(mapped);
      let name: string;
      do name = `FlatW${counter++}`;
      while (xobjects.has(PDFName.of(name)));
      xobjects.set(PDFName.of(name), mapped);
      draws.push(`q ${fmt(a)} 0 0 ${fmt(dd)} ${fmt(x1 - t[0] * a)} ${fmt(y1 - t[1] * dd)} cm /${name} Do Q`);
    }
    if (draws.length === 0) return;
    ownResources.set(K.XObject, xobjects);
    d.set(N.Resources, ownResources);
    const streams = this.contentStreams(page.dict.get(K.Contents));
    const parts = this.out.array();
    if (streams.length) {
      parts.push(this.out.register(this.out.stream('q\n')));
      for (const c of streams) parts.push(this.copy(c));
      parts.push(this.out.register(this.out.stream(`Q\n${draws.join('\n')}\n`)));
    } else {
      parts.push(this.out.register(this.out.stream(`${draws.join('\n')}\n`)));
    }
    d.set(K.Contents, parts);
  }
}

function numbers(obj: PDFObject | undefined, count: number): number[] | null {
  if (!(obj instanceof PDFArray) || obj.size() < count) return null;
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const v = obj.get(i);
    if (!(v instanceof PDFNumber)) return null;
    out.push(v.asNumber());
  }
  return out;
}

function transformedBox(b: number[], m: number[]): [number, number, number, number] {
  const pts = [
    [b[0], b[1]],
    [b[2], b[1]],
    [b[0], b[3]],
    [b[2], b[3]],
  ].map(([x, y]) => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]]);
  const xs = pts.map((p) => p[0]);
  const ys = pts.map((p) => p[1]);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

/** A number in content-stream syntax, which has no exponents: String(1e24) is "1e+24", which no viewer reads as 10^24. */
function fmt(n: number): string {
  return Number.isInteger(n) ? numberToString(n) : n.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
}
