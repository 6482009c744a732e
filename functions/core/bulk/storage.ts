/**
 * Where a bulk job keeps things, and reading the checked bundle. Staged inputs (the job's copy of the ZIP,
 * the request, the bundle index, the PDFs made so far) live under `inputs/<account>/<job>/` and are removed
 * when the job ends (the bucket's 2-day rule catches anything left); the output ZIP lives under `outputs/`
 * for 30 days. Files are read straight from the checked archive at the offsets the check recorded.
 */
import type { BlobStore } from '../jobs/ports';
import { objectKey } from '../jobs/storage-layout';
import { newUploadKey } from '../jobs/uploads';
import type { PdfOptions } from '../render/options';
import { type EntryLocation, readLocation } from './archive';
import type { BundleType } from './limits';

export const ZIP = 'application/zip';

/** The ledger unit of a bundle file's charge: each file is charged once per job. */
export const fileChargeUnit = (index: number) => `file#${index}`;

export const bulkKeys = {
  /** A presigned upload (POST /bulkjob/upload-url); kept one day. */
  upload: (accountId: string) => newUploadKey(accountId, 'bulk'),
  /** The job's own copy of its ZIP: the inline input, or the upload copied when the job starts (so it cannot change after the check). */
  bundle: (accountId: string, jobId: string) => objectKey('jobInputs', accountId, jobId, 'bundle.zip'),
  request: (accountId: string, jobId: string) => objectKey('jobInputs', accountId, jobId, 'request.json'),
  index: (accountId: string, jobId: string) => objectKey('jobInputs', accountId, jobId, 'bundle.json'),
  pdf: (accountId: string, jobId: string, index: number) => objectKey('jobInputs', accountId, jobId, 'pdf', `${String(index).padStart(3, '0')}.pdf`),
  output: (accountId: string, jobId: string) => objectKey('jobOutputs', accountId, jobId, `${jobId}.zip`),
};

/** What the submission stored for the job (options can be larger than a workflow input may be). */
export interface StoredBulkRequest {
  bundle_type: BundleType;
  options: PdfOptions;
  /** Where the ZIP is: an upload of the account or the staged inline input. */
  zip_key: string;
}

export interface BundleFile {
  /** Row index: position among the convertible files, in archive order. */
  index: number;
  path: string;
  size: number;
  /** Its data in the archive (null for a file too large to convert). */
  entry: EntryLocation | null;
}

/** The checked bundle, written once by the prepare step and read by every file render. */
export interface BundleIndex {
  bundle_type: BundleType;
  options: PdfOptions;
  /** The checked archive under the job's own key. */
  zip_key: string;
  /** Convertible files, by index. */
  files: BundleFile[];
  /** Every usable file (convertible ones included), by normalised path. */
  entries: Record<string, EntryLocation>;
}

/** Staged objects never change, so a process keeps what it read: a small LRU by bytes (warm Lambdas, the local stack). */
class LruCache<T extends { length: number }> {
  private readonly items = new Map<string, T>();
  private bytes = 0;
  constructor(
    private readonly maxBytes: number,
    private readonly maxItemBytes: number,
  ) {}

  get(key: string): T | undefined {
    const v = this.items.get(key);
    if (v !== undefined) {
      this.items.delete(key);
      this.items.set(key, v);
    }
    return v;
  }

  set(key: string, value: T) {
    if (value.length > this.maxItemBytes || this.items.has(key)) return;
    this.items.set(key, value);
    this.bytes += value.length;
    for (const [k, v] of this.items) {
      if (this.bytes <= this.maxBytes) break;
      this.items.delete(k);
      this.bytes -= v.length;
    }
  }
}

const zips = new LruCache<Buffer>(160 * 1024 * 1024, 64 * 1024 * 1024);
const files = new LruCache<Buffer>(32 * 1024 * 1024, 4 * 1024 * 1024);
const indexes = new Map<string, BundleIndex>();
const inflight = new Map<string, Promise<Buffer | null>>();

/** Reads an immutable staged object through the process cache (concurrent reads of one key share one GET). */
function readStaged(blobs: BlobStore, key: string): Promise<Buffer | null> {
  const hit = zips.get(key);
  if (hit !== undefined) return Promise.resolve(hit);
  let pending = inflight.get(key);
  if (!pending) {
    pending = blobs.get(key).then((value) => {
      if (value) zips.set(key, value);
      return value;
    });
    const done = () => inflight.delete(key);
    pending.then(done, done);
    inflight.set(key, pending);
  }
  return pending;
}

export async function loadIndex(blobs: BlobStore, accountId: string, jobId: string): Promise<BundleIndex | null> {
  const key = bulkKeys.index(accountId, jobId);
  const cached = indexes.get(key);
  if (cached) return cached;
  const raw = await blobs.get(key);
  if (!raw) return null;
  const index = JSON.parse(raw.toString('utf8')) as BundleIndex;
  if (indexes.size >= 8) indexes.delete(indexes.keys().next().value!);
  indexes.set(key, index);
  return index;
}

/** Per index: bundle paths by their NFC form (null where two files share one). */
const byComposedName = new WeakMap<BundleIndex, Map<string, string | null>>();

/** The entry a page's request names (see entryNamed), else, in a ZIP of one folder, that name inside the folder. */
function entryAt(index: BundleIndex, path: string): EntryLocation | undefined {
  const found = entryNamed(index, path);
  if (found) return found;
  // A ZIP of one folder (what "Compress" on a folder makes: everything under `site/`): its pages' root references
  // (`/css/site.css`) mean that folder, as they did on the site it was zipped from.
  const root = singleFolderOf(index);
  return root && !path.startsWith(root) ? entryNamed(index, root + path) : undefined;
}

/** Per index: the one top-level folder every file is under (`site/`), or null. */
const singleFolders = new WeakMap<BundleIndex, string | null>();

function singleFolderOf(index: BundleIndex): string | null {
  if (singleFolders.has(index)) return singleFolders.get(index)!;
  const tops = new Set(Object.keys(index.entries).map((p) => (p.includes('/') ? p.slice(0, p.indexOf('/') + 1) : '')));
  const [only] = tops;
  const root = tops.size === 1 && only ? only : null;
  singleFolders.set(index, root);
  return root;
}

/**
 * The entry at `path`, else the one file whose name is the same text in another Unicode normalisation. ZIPs made on
 * macOS often name `café.png` decomposed (e + U+0301) while the page that refers to it, typed in an editor, has it
 * composed; browsers do not normalise URLs, so the image was missing.
 */
function entryNamed(index: BundleIndex, path: string): EntryLocation | undefined {
  if (Object.prototype.hasOwnProperty.call(index.entries, path)) return index.entries[path];
  let composed = byComposedName.get(index);
  if (!composed) {
    composed = new Map();
    for (const p of Object.keys(index.entries)) {
      const key = p.normalize('NFC');
      composed.set(key, composed.has(key) ? null : p);
    }
    byComposedName.set(index, composed);
  }
  const found = composed.get(path.normalize('NFC'));
  return found ? index.entries[found] : undefined;
}

/** Per index: the files to convert, by where their data is in the archive. */
const documentsByStart = new WeakMap<BundleIndex, Map<number, BundleFile>>();

/**
 * The file to convert that a page's reference names (found as `bundleReader` finds files), else undefined: a link to
 * it is a link to a document that gets a PDF of its own.
 */
export function bundleDocumentAt(index: BundleIndex, path: string): BundleFile | undefined {
  const at = entryAt(index, path);
  if (!at) return undefined;
  let byStart = documentsByStart.get(index);
  if (!byStart) {
    byStart = new Map(index.files.filter((f) => f.entry !== null).map((f) => [f.entry!.start, f]));
    documentsByStart.set(index, byStart);
  }
  return byStart.get(at.start);
}

/** A bundle file's inflated size by path (null when the bundle has none), from the index: nothing is read. */
export function bundleFileSize(index: BundleIndex, path: string): number | null {
  return entryAt(index, path)?.size ?? null;
}

/** A bundle file's bytes by path (null when the bundle has none), read from the checked archive. */
export function bundleReader(blobs: BlobStore, index: BundleIndex) {
  return async (path: string): Promise<Buffer | null> => {
    const at = entryAt(index, path);
    if (!at) return null;
    const key = `${index.zip_key}#${at.start}`;
    const hit = files.get(key);
    if (hit) return hit;
    const zip = await readStaged(blobs, index.zip_key);
    if (!zip) throw new Error(`the bundle of ${index.zip_key} is missing from storage`);
    const data = await readLocation(zip, at);
    files.set(key, data);
    return data;
  };
}
