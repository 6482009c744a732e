/**
 * Reading a bundle ZIP safely. `inspectArchive` checks the whole archive before anything is extracted:
 * entry count, every entry name (absolute, `..`, backslash, control characters, symlinks, duplicates), every
 * local header and data descriptor against the central directory, and where each entry lies (entries sharing bytes
 * are an overlapping ZIP bomb, refused before anything is inflated), then every entry's data is inflated and its
 * real bytes counted (declared sizes are never trusted): an entry over 1 MB expanding more than 100× is suspicious,
 * more than 300 MB in all is too much, and sizes or checksums that do not match what the archive declares make it
 * invalid. Only then does `readLocation` hand out data, from where the check found it.
 * Nested archives are ordinary files: never opened.
 */
import { promisify } from 'node:util';
import { crc32, createInflateRaw, inflateRaw } from 'node:zlib';
import yauzl, { type Entry, type LocalFileHeader, type ZipFile } from 'yauzl';
import { ServiceError } from '../errors';
import { BULK_LIMITS } from './limits';
import { isIgnoredEntry, normalisePath, pathProblem } from './paths';

export type ArchiveCode = 'BULK_ZIP_UNSAFE_ENTRY' | 'BULK_ZIP_SUSPICIOUS_ENTRY' | 'BULK_ZIP_DECOMPRESSED_TOO_LARGE' | 'BULK_ZIP_TOO_MANY_ENTRIES' | 'BULK_ZIP_INVALID';

/** A job-level refusal of the archive (the job fails with this code; never an HTTP answer). */
export class ArchiveError extends ServiceError {
  constructor(code: ArchiveCode, message: string, details: Record<string, unknown> = {}) {
    super(code, message, details);
    this.name = 'ArchiveError';
  }
}

export interface ArchiveLimits {
  entries: number;
  expandedBytes: number;
  suspiciousBytes: number;
  suspiciousRatio: number;
}

/** Where a checked entry's data is in the archive, so it can be read later without parsing the archive again. */
export interface EntryLocation {
  /** Offset of the entry's (compressed) data in the ZIP. */
  start: number;
  compressed: number;
  /** 0 stored, 8 deflated. */
  method: number;
  /** Real inflated size and checksum, as checked. */
  size: number;
  crc: number;
}

export interface ArchiveFile {
  /** Position in the archive's central directory. */
  ordinal: number;
  /** Normalised path (no `.` or empty segments). */
  path: string;
  /** Real inflated size. */
  size: number;
  location: EntryLocation;
}

export interface InspectedArchive {
  /** Files to use, in archive order (folders and ignored entries left out). */
  files: ArchiveFile[];
  /** Entries in the archive (all kinds). */
  entryCount: number;
  /** Real inflated bytes of all entries. */
  expandedBytes: number;
  ignored: number;
  zip: ZipFile;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

function open(source: Buffer): Promise<ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(source, { lazyEntries: true, decodeStrings: false, validateEntrySizes: false, autoClose: false, strictFileNames: true }, (err, zip) =>
      err ? reject(err) : resolve(zip),
    );
  });
}

function invalid(reason: string, message: string, details: Record<string, unknown> = {}): ArchiveError {
  return new ArchiveError('BULK_ZIP_INVALID', `The archive cannot be read: ${message} Create the ZIP again with a standard tool (zip, 7-Zip, Finder, Explorer).`, { reason, ...details });
}

function unsafe(reason: string, name: string, message: string): ArchiveError {
  return new ArchiveError('BULK_ZIP_UNSAFE_ENTRY', `Entry "${name.slice(0, 200)}" ${message}; nothing was extracted. Remove it and zip the bundle again.`, { entry: name.slice(0, 200), reason });
}

async function readCentralDirectory(zip: ZipFile): Promise<Entry[]> {
  const entries: Entry[] = [];
  return new Promise((resolve, reject) => {
    zip.on('entry', (entry: Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve(entries));
    zip.on('error', reject);
    zip.readEntry();
  });
}

const decodeName = (yauzl as unknown as { getFileNameLowLevel(flags: number, raw: Buffer, extra: unknown, strict: boolean): string }).getFileNameLowLevel;

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });
const UTF8_FLAG = 0x800;

function isUtf8(raw: Buffer): boolean {
  try {
    STRICT_UTF8.decode(raw);
    return true;
  } catch {
    return false;
  }
}

/**
 * The name in the header itself, without the Info-ZIP Unicode field. Tools that ignore that field (Python's zipfile,
 * many extractors) use this one, so it must be as safe as the name the bundle is read under. UTF-8 when flagged, else
 * CP437, with two exceptions for names not flagged UTF-8: control bytes are kept as control characters (CP437 draws
 * them as ☺ or ◙, but Python's zipfile and unzip extract them as line breaks or escapes, so they are refused as
 * such), and a name that is valid UTF-8 with bytes past ASCII is read as UTF-8: macOS Archive Utility writes UTF-8
 * names without the flag (read as CP437, `café.png` became `cafe╠ü.png`, its output and references lost).
 */
function headerName(entry: Entry): string {
  const raw = entry.fileNameRaw;
  if (!(entry.generalPurposeBitFlag & UTF8_FLAG)) {
    if (raw.some((b) => b < 0x20 || b === 0x7f)) return raw.toString('latin1');
    // Else not UTF-8: CP437 as the format says.
    if (raw.some((b) => b >= 0x80) && isUtf8(raw)) return STRICT_UTF8.decode(raw);
  }
  return decodeName(entry.generalPurposeBitFlag, raw, [], true);
}

/** The entry's name as text: the Info-ZIP Unicode field when it has a valid one for this header name, else `headerName`; backslashes kept. */
function entryName(entry: Entry): string {
  const withField = decodeName(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
  return withField !== decodeName(entry.generalPurposeBitFlag, entry.fileNameRaw, [], true) ? withField : headerName(entry);
}

/** `./`, `././`: a folder entry for the archive's root, which normalises to no path at all. */
function isRootFolder(name: string): boolean {
  return /^(?:\.\/+)+$/.test(name);
}

function isSymlink(entry: Entry): boolean {
  return ((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK;
}

/** Why a name is unsafe (message for the job), or null. */
const UNSAFE_MESSAGES: Record<string, string> = {
  empty: 'has an empty name',
  absolute: 'has an absolute path',
  parent_reference: 'contains ".." and would be written outside the bundle',
  backslash: 'contains a backslash (a Windows path that may climb out of the bundle)',
  control_character: 'has a control character in its name',
  lone_surrogate: 'has half of a surrogate pair in its name',
  too_long: 'has a name longer than 1024 characters',
};

type Counted = { size: number; crc: number; start: number } | { over: number };

/**
 * The local header repeats what the central directory says of an entry. Readers differ in which one they trust, so
 * an archive whose two copies disagree would be a different archive to another tool: it is refused.
 */
function localHeaderMismatch(entry: Entry, local: LocalFileHeader): string | null {
  if (!local.fileName.equals(entry.fileNameRaw)) return 'name';
  if (local.compressionMethod !== entry.compressionMethod) return 'compression method';
  if ((local.generalPurposeBitFlag & 1) !== (entry.generalPurposeBitFlag & 1)) return 'encryption flag';
  // With a data descriptor (flag bit 3) the local header leaves checksum and sizes at 0; 0xFFFFFFFF defers to ZIP64.
  if (!(local.generalPurposeBitFlag & 8)) {
    if (local.crc32 !== entry.crc32) return 'checksum';
    if (local.compressedSize !== 0xffffffff && local.compressedSize !== entry.compressedSize) return 'compressed size';
    if (local.uncompressedSize !== 0xffffffff && local.uncompressedSize !== entry.uncompressedSize) return 'size';
  }
  return null;
}

const CENTRAL_FILE_HEADER = 0x02014b50;
const DATA_DESCRIPTOR = 0x08074b50;
const ZIP64_FIELD = 0x0001;
const ZIP64_MARK = 0xffffffff;

/**
 * A local header's sizes marked 0xFFFFFFFF are in its ZIP64 field (uncompressed size first, then compressed):
 * readers that stream the archive use those, so they must be the central directory's too.
 */
function localZip64Mismatch(entry: Entry, local: LocalFileHeader): string | null {
  if (local.generalPurposeBitFlag & 8) return null;
  if (local.uncompressedSize !== ZIP64_MARK && local.compressedSize !== ZIP64_MARK) return null;
  const field = yauzl.parseExtraFields(local.extraField).find((f) => f.id === ZIP64_FIELD)?.data ?? Buffer.alloc(0);
  let at = 0;
  const next = () => (at + 8 <= field.length ? Number(field.readBigUInt64LE((at += 8) - 8)) : -1);
  if (local.uncompressedSize === ZIP64_MARK && next() !== entry.uncompressedSize) return 'size';
  if (local.compressedSize === ZIP64_MARK && next() !== entry.compressedSize) return 'compressed size';
  return null;
}

/**
 * The length of the data descriptor at `at` when it says what the central directory says (signature optional,
 * sizes of 4 or 8 bytes, as writers differ), else null. Readers that stream an archive trust the descriptor.
 */
function trueDescriptorLength(source: Buffer, at: number, entry: Entry): number | null {
  for (const signed of [true, false]) {
    for (const wide of [false, true]) {
      const fields = signed ? at + 4 : at;
      const end = fields + (wide ? 20 : 12);
      if (end > source.length || (signed && source.readUInt32LE(at) !== DATA_DESCRIPTOR)) continue;
      const compressed = wide ? Number(source.readBigUInt64LE(fields + 4)) : source.readUInt32LE(fields + 4);
      const size = wide ? Number(source.readBigUInt64LE(fields + 12)) : source.readUInt32LE(fields + 8);
      if (source.readUInt32LE(fields) === entry.crc32 && compressed === entry.compressedSize && size === entry.uncompressedSize) return end - at;
    }
  }
  return null;
}

/** Where an entry lies in the archive: its local header (`from`), its data (`start` to `end`), and its data descriptor (up to `to`). */
interface LocalSpan {
  from: number;
  start: number;
  end: number;
  to: number;
}

/** Reads and checks an entry's local header (and data descriptor) against its central record; says where it lies. */
async function localSpan(zip: ZipFile, source: Buffer, entry: Entry): Promise<LocalSpan> {
  const name = entryName(entry).slice(0, 200);
  let local: LocalFileHeader;
  try {
    local = await zip.readLocalFileHeaderPromise(entry);
  } catch (err) {
    throw invalid('bad_local_header', `entry "${name}" has a damaged header.`);
  }
  const mismatch = localHeaderMismatch(entry, local) ?? localZip64Mismatch(entry, local);
  if (mismatch) throw invalid('local_header_mismatch', `entry "${name}" has a different ${mismatch} in its local header than in the central directory.`);
  const start = local.fileDataStart;
  const end = start + entry.compressedSize;
  if (end > source.length) throw invalid('truncated', `entry "${name}" runs past the end of the file.`);
  let to = end;
  if (local.generalPurposeBitFlag & 8) {
    const descriptor = trueDescriptorLength(source, end, entry);
    if (descriptor === null) throw invalid('data_descriptor_mismatch', `entry "${name}" has a data descriptor that does not match the central directory.`);
    to += descriptor;
  }
  return { from: entry.relativeOffsetOfLocalHeader, start, end, to };
}

/**
 * Inflates an entry's data counting real bytes; stops as soon as more than `cap` bytes came out (and says so).
 * The data is only counted, never kept.
 */
async function inflate(source: Buffer, entry: Entry, at: LocalSpan, cap: number): Promise<Counted> {
  const fileDataStart = at.start;
  const raw = source.subarray(at.start, at.end);
  // An empty file has no data at all (the format's rule for zero-byte files), also when it is marked deflated:
  // an inflater fed nothing reports a truncated stream.
  if (entry.compressionMethod === 0 || raw.length === 0) {
    if (raw.length > cap) return { over: raw.length };
    return { size: raw.length, crc: crc32(raw), start: fileDataStart };
  }
  return new Promise<Counted>((resolve, reject) => {
    const inflater = createInflateRaw({ chunkSize: 64 * 1024 });
    let size = 0;
    let crc = 0;
    let done = false;
    inflater.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > cap) {
        done = true;
        inflater.destroy();
        resolve({ over: size });
        return;
      }
      crc = crc32(chunk, crc);
    });
    inflater.on('end', () => {
      if (done) return;
      done = true;
      resolve({ size, crc, start: fileDataStart });
    });
    inflater.on('error', (err) => {
      if (done) return;
      done = true;
      reject(invalid('corrupt_data', `the data of entry "${entryName(entry).slice(0, 200)}" is damaged.`));
    });
    // Fed in slices, so a bomb is stopped after the first slices that cross the cap.
    const SLICE = 256 * 1024;
    const feed = (offset: number) => {
      while (!done && offset < raw.length) {
        const more = inflater.write(raw.subarray(offset, offset + SLICE));
        offset += SLICE;
        if (!more) {
          inflater.once('drain', () => feed(offset));
          return;
        }
      }
      if (!done) inflater.end();
    };
    feed(0);
  });
}

/** Where yauzl reads the central directory's next record: its start before reading, its end after. */
const directoryCursor = (zip: ZipFile) => (zip as unknown as { readEntryCursor: number }).readEntryCursor;

/** The whole safety check; throws ArchiveError with the job-level code. Nothing is extracted. */
export async function inspectArchive(source: Buffer, limits: ArchiveLimits = BULK_LIMITS): Promise<InspectedArchive> {
  let zip: ZipFile;
  try {
    zip = await open(source);
  } catch (err) {
    throw invalid('not_a_zip', 'it is not a ZIP archive.');
  }
  if (zip.entryCount > limits.entries) {
    throw new ArchiveError('BULK_ZIP_TOO_MANY_ENTRIES', `The archive has ${zip.entryCount} entries; at most ${limits.entries} are allowed. Split the bundle into several jobs.`, {
      entries: zip.entryCount,
      max_entries: limits.entries,
    });
  }
  const directoryOffset = directoryCursor(zip);
  let entries: Entry[];
  try {
    entries = await readCentralDirectory(zip);
  } catch (err) {
    throw invalid('bad_directory', 'its central directory is damaged.');
  }
  // The end record's entry count must reach the end of the central directory: more records after it would be entries
  // this check never saw but other tools extract.
  const cursor = directoryCursor(zip);
  if (cursor + 4 <= source.length && source.readUInt32LE(cursor) === CENTRAL_FILE_HEADER) {
    throw invalid('bad_directory', `its end record counts ${entries.length} entries but its central directory holds more.`);
  }

  // 1. Names and kinds of every entry, before any data is touched.
  const seen = new Set<string>();
  const candidates: { entry: Entry; ordinal: number; path: string; directory: boolean; ignored: boolean }[] = [];
  for (const [ordinal, entry] of entries.entries()) {
    const name = entryName(entry);
    if (entry.generalPurposeBitFlag & UTF8_FLAG && !isUtf8(entry.fileNameRaw)) throw unsafe('invalid_utf8', name, 'has a name flagged UTF-8 that is not valid UTF-8 (other tools may read its bytes differently, 0xC0 0xAE as ".")');
    if (isSymlink(entry)) throw unsafe('symlink', name, 'is a symbolic link (links could point outside the bundle)');
    // `./` is the bundle's own folder (bsdtar, the `tar -a` of macOS and Windows, writes it first): a folder of nothing.
    const problem = isRootFolder(name) ? null : pathProblem(name);
    if (problem) throw unsafe(problem, name, UNSAFE_MESSAGES[problem]);
    const inHeader = headerName(entry);
    const headerProblem = inHeader === name || isRootFolder(inHeader) ? null : pathProblem(inHeader);
    if (headerProblem) throw unsafe(headerProblem, inHeader, `${UNSAFE_MESSAGES[headerProblem]} (its Unicode name field says "${name.slice(0, 100)}", which other tools ignore)`);
    const directory = name.endsWith('/');
    const path = normalisePath(name);
    if (seen.has(path)) throw unsafe('duplicate', name, 'appears more than once (a later copy could replace an earlier one)');
    seen.add(path);
    if (entry.isEncrypted()) throw invalid('encrypted', `entry "${name.slice(0, 200)}" is encrypted; send an archive without a password.`, { entry: name.slice(0, 200) });
    if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
      throw invalid('unsupported_compression', `entry "${name.slice(0, 200)}" uses compression method ${entry.compressionMethod}; only stored and deflated entries are read.`, {
        entry: name.slice(0, 200),
      });
    }
    candidates.push({ entry, ordinal, path, directory, ignored: isIgnoredEntry(path) });
  }

  // 2. Where every entry lies, before any data is inflated. Entries that share bytes (Fifield's overlapping ZIP bomb:
  // every entry inflates one kernel again, 400 MB from 40 KB) or lie in the central directory are no archive a
  // standard tool writes: refused before any of their bytes is inflated.
  const spans = new Map<Entry, LocalSpan>();
  for (const c of candidates) spans.set(c.entry, await localSpan(zip, source, c.entry));
  const ordered = [...spans.entries()].sort(([, a], [, b]) => a.from - b.from);
  for (const [i, [entry, span]] of ordered.entries()) {
    const limit = i + 1 < ordered.length ? ordered[i + 1][1].from : directoryOffset;
    if (span.to > limit) {
      const what = i + 1 < ordered.length ? `the entry "${entryName(ordered[i + 1][0]).slice(0, 200)}"` : 'the central directory';
      throw invalid('overlapping_entries', `the data of entry "${entryName(entry).slice(0, 200)}" overlaps ${what}.`);
    }
  }

  // 3. Real inflated bytes of every entry (also folders and ignored ones: they are part of the archive).
  let expanded = 0;
  const files: ArchiveFile[] = [];
  for (const c of candidates) {
    const ratioCap = Math.max(limits.suspiciousBytes, limits.suspiciousRatio * c.entry.compressedSize);
    const remaining = limits.expandedBytes - expanded;
    const counted = await inflate(source, c.entry, spans.get(c.entry)!, Math.min(ratioCap, remaining));
    if ('over' in counted) {
      if (counted.over > ratioCap) {
        throw new ArchiveError(
          'BULK_ZIP_SUSPICIOUS_ENTRY',
          `Entry "${c.path.slice(0, 200)}" expands more than ${limits.suspiciousRatio} times its compressed size to over 1 MB (a ZIP bomb?); nothing was extracted. Remove it, or store it uncompressed (zip -0).`,
          { entry: c.path.slice(0, 200), compressed_bytes: c.entry.compressedSize, max_ratio: limits.suspiciousRatio },
        );
      }
      throw new ArchiveError('BULK_ZIP_DECOMPRESSED_TOO_LARGE', `The archive expands to more than ${Math.round(limits.expandedBytes / 1048576)} MB; split the bundle into several jobs.`, {
        max_bytes: limits.expandedBytes,
      });
    }
    if (counted.size !== c.entry.uncompressedSize) {
      throw invalid('size_mismatch', `entry "${c.path.slice(0, 200)}" inflates to ${counted.size} bytes but declares ${c.entry.uncompressedSize}.`, { entry: c.path.slice(0, 200) });
    }
    if (counted.crc !== c.entry.crc32) throw invalid('crc_mismatch', `entry "${c.path.slice(0, 200)}" fails its checksum.`, { entry: c.path.slice(0, 200) });
    expanded += counted.size;
    if (!c.directory && !c.ignored) {
      const location = { start: counted.start, compressed: c.entry.compressedSize, method: c.entry.compressionMethod, size: counted.size, crc: counted.crc };
      files.push({ ordinal: c.ordinal, path: c.path, size: counted.size, location });
    }
  }
  return { files, entryCount: entries.length, expandedBytes: expanded, ignored: candidates.filter((c) => c.ignored).length, zip };
}

const inflateRawAsync = promisify(inflateRaw);

/**
 * The data of a checked entry straight from the archive bytes (the same bytes that were checked): never more
 * than its checked size, and its checksum verified again. Inflated on libuv's thread pool: a 32 MB asset inflated
 * in place held up every other request of the process meanwhile.
 */
export async function readLocation(zip: Buffer, at: EntryLocation): Promise<Buffer> {
  const raw = zip.subarray(at.start, at.start + at.compressed);
  if (raw.length !== at.compressed) throw new Error('the archive is shorter than when it was checked');
  const data = at.method === 0 ? Buffer.from(raw) : at.size === 0 ? Buffer.alloc(0) : await inflateRawAsync(raw, { maxOutputLength: at.size });
  if (data.length !== at.size || crc32(data) !== at.crc) throw new Error('the archive changed since it was checked');
  return data;
}

export function closeArchive(archive: InspectedArchive): void {
  archive.zip.close();
}
