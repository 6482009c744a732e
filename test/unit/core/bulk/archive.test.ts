import { crc32, deflateRawSync } from 'node:zlib';
import yazl from 'yazl';
import { ArchiveError, inspectArchive, readLocation } from '../../../../functions/core/bulk/archive';
import { rejection } from '../../../support/errors';
import { centralHeader, dataDescriptor, localHeader, quotedOverlapBomb, rawZip, ratioEntry, zipOf } from '../../../support/zips';

const MiB = 1024 * 1024;

const refusal = (zip: Buffer) => rejection(inspectArchive(zip), ArchiveError);

function yazlZip(files: Record<string, string | Buffer>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, data] of Object.entries(files)) zip.addBuffer(Buffer.from(data), name);
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

describe('inspectArchive', () => {
  it('lists the files of an ordinary archive in archive order, leaving out folders and macOS litter', async () => {
    const zip = rawZip([
      { name: 'docs/' },
      { name: 'docs/b.html', data: '<p>b</p>' },
      { name: 'a.html', data: '<p>a</p>' },
      { name: 'css/site.css', data: 'p{}', method: 0 },
      { name: '__MACOSX/docs/._b.html', data: 'xattr' },
      { name: 'docs/._b.html', data: 'xattr' },
      { name: '.DS_Store', data: 'finder' },
      { name: 'docs/.DS_Store', data: 'finder' },
      { name: './c.html', data: '<p>c</p>' },
    ]);
    const archive = await inspectArchive(zip);
    expect(archive.files.map((f) => [f.path, f.size])).toEqual([
      ['docs/b.html', 8],
      ['a.html', 8],
      ['css/site.css', 3],
      ['c.html', 8],
    ]);
    expect(archive.entryCount).toBe(9);
    expect(archive.ignored).toBe(4);
    expect((await readLocation(zip, archive.files[0].location)).toString()).toBe('<p>b</p>');
    expect((await readLocation(zip, archive.files[2].location)).toString()).toBe('p{}');
  });

  it('reads archives written by a standard library (yazl)', async () => {
    const archive = await inspectArchive(await yazlZip({ 'x/y.md': '# y', 'z.png': Buffer.alloc(100, 7) }));
    expect(archive.files.map((f) => f.path)).toEqual(['x/y.md', 'z.png']);
  });

  it.each([
    ['zip-slip ../', '../evil.html', 'parent_reference'],
    ['zip-slip inside a path', 'docs/../../evil.html', 'parent_reference'],
    ['a Windows ..\\ path', '..\\evil.html', 'backslash'],
    ['a Windows folder path', 'docs\\a.html', 'backslash'],
    ['an absolute path', '/etc/cron.d/evil', 'absolute'],
    ['a drive-letter path', 'C:/Windows/evil.html', 'absolute'],
    ['a control character', 'a\u0000.html', 'control_character'],
  ])('refuses %s as BULK_ZIP_UNSAFE_ENTRY', async (_name, entryName, reason) => {
    const result = await refusal(rawZip([{ name: 'ok.html', data: '<p>ok</p>' }, { name: entryName, data: 'x' }]));
    expect(result).toMatchObject({ code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason } });
  });

  it('refuses an entry whose header name is unsafe though its Unicode name field gives a clean one (tools that ignore the field would climb out)', async () => {
    const hidden = rawZip([{ name: 'ok.html', data: '<p>ok</p>' }, { name: '../evil.html', data: 'x', unicodeName: 'good.html' }]);
    expect(await refusal(hidden)).toMatchObject({ code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason: 'parent_reference', entry: '../evil.html' } });
    // The other way round the name read is unsafe itself.
    const shown = rawZip([{ name: 'good.html', data: 'x', unicodeName: '../evil.html' }]);
    expect(await refusal(shown)).toMatchObject({ code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason: 'parent_reference', entry: '../evil.html' } });
    // A Unicode field for a harmless header name (an older tool's non-ASCII name) is read as usual.
    const archive = await inspectArchive(rawZip([{ name: 'resume.html', data: 'x', unicodeName: 'résumé.html' }]));
    expect(archive.files.map((f) => f.path)).toEqual(['résumé.html']);
  });

  it('refuses a symlink entry, and so a file written through it', async () => {
    const zip = rawZip([
      { name: 'link', data: '/etc', unixMode: 0o120777, method: 0 },
      { name: 'link/passwd.html', data: '<p>through the link</p>' },
    ]);
    expect(await refusal(zip)).toMatchObject({ code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason: 'symlink', entry: 'link' } });
    // An ordinary file with Unix permissions is fine.
    const plain = rawZip([{ name: 'a.html', data: 'x', unixMode: 0o100644 }]);
    const ordinary = await inspectArchive(plain);
    expect(ordinary.files.map((f) => f.path)).toEqual(['a.html']);
    expect((await readLocation(plain, ordinary.files[0].location)).toString()).toBe('x');
  });

  it.each<[string, (zip: Buffer) => void]>([
    ['a different name', (zip) => zip.write('b', 30)],
    ['a different compression method', (zip) => zip.writeUInt16LE(0, 8)],
    ['the encryption flag', (zip) => zip.writeUInt16LE(zip.readUInt16LE(6) | 1, 6)],
    ['a different checksum', (zip) => zip.writeUInt32LE(0xdeadbeef, 14)],
    ['a different size', (zip) => zip.writeUInt32LE(99_999, 22)],
    ['a different compressed size', (zip) => zip.writeUInt32LE(99_999, 18)],
  ])('refuses an entry whose local header says something else than the central directory: %s', async (_what, patch) => {
    const zip = rawZip([{ name: 'a.html', data: '<p>a</p>' }]);
    patch(zip); // the first local header starts at 0
    expect(await refusal(zip)).toMatchObject({ code: 'BULK_ZIP_INVALID', details: { reason: 'local_header_mismatch' } });
  });

  it('accepts local headers that leave checksum and sizes to a data descriptor (yazl writes those)', async () => {
    const zip = await yazlZip({ 'a.html': '<p>a</p>', 'b.html': '<p>bb</p>' });
    const archive = await inspectArchive(zip);
    expect(archive.files.map((f) => [f.path, f.size])).toEqual([
      ['a.html', 8],
      ['b.html', 9],
    ]);
    expect((await readLocation(zip, archive.files[0].location)).toString()).toBe('<p>a</p>');
    expect((await readLocation(zip, archive.files[1].location)).toString()).toBe('<p>bb</p>');
  });

  it('checks the local checksum and sizes unless the local header itself defers them to a data descriptor', async () => {
    const zip = rawZip([{ name: 'a.html', data: '<p>a</p>' }]);
    const central = zip.length - 22 - (46 + 'a.html'.length);
    // The data-descriptor flag only in the central directory excuses nothing: the local header states a checksum.
    zip.writeUInt16LE(zip.readUInt16LE(central + 8) | 8, central + 8);
    zip.writeUInt32LE(0xdeadbeef, 14);
    expect(await refusal(zip)).toMatchObject({ code: 'BULK_ZIP_INVALID', details: { reason: 'local_header_mismatch' } });
  });

  it('refuses an end record that counts fewer entries than the central directory holds', async () => {
    const zip = rawZip([{ name: 'a.html', data: 'a' }, { name: 'b.html', data: 'b' }]);
    const end = zip.length - 22;
    zip.writeUInt16LE(1, end + 8);
    zip.writeUInt16LE(1, end + 10);
    expect(await refusal(zip)).toMatchObject({ code: 'BULK_ZIP_INVALID', details: { reason: 'bad_directory' } });
  });

  it('refuses duplicate names (also after normalising ./ and //)', async () => {
    expect(await refusal(rawZip([{ name: 'a.html', data: '1' }, { name: 'a.html', data: '2' }]))).toMatchObject({ code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason: 'duplicate' } });
    expect(await refusal(rawZip([{ name: 'd/a.html', data: '1' }, { name: './d//a.html', data: '2' }]))).toMatchObject({ code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason: 'duplicate' } });
  });

  it('allows 1000 entries and refuses 1001 with BULK_ZIP_TOO_MANY_ENTRIES', async () => {
    const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `f${i}.css`, data: 'p{}', method: 0 as const }));
    expect((await inspectArchive(rawZip(entries(1000)))).files).toHaveLength(1000);
    expect(await refusal(rawZip(entries(1001)))).toMatchObject({ code: 'BULK_ZIP_TOO_MANY_ENTRIES', details: { entries: 1001, max_entries: 1000 } });
  });

  it('accepts an entry over 1 MB expanding 99 times and refuses one expanding 101 times (BULK_ZIP_SUSPICIOUS_ENTRY)', async () => {
    const at99 = ratioEntry('ok.css', 2 * MiB, 99);
    const at101 = ratioEntry('bomb.css', 2 * MiB, 101);
    expect(at99.realRatio).toBeLessThan(100);
    expect(at101.realRatio).toBeGreaterThan(100);
    expect((await inspectArchive(rawZip([at99]))).files[0].size).toBe(2 * MiB);
    expect(await refusal(rawZip([at101]))).toMatchObject({ code: 'BULK_ZIP_SUSPICIOUS_ENTRY', details: { entry: 'bomb.css', max_ratio: 100 } });
    expect((await refusal(rawZip([at101]))).message).toMatch(/nothing was extracted\. Remove it, or store it uncompressed \(zip -0\)\.$/);
  });

  it('does not mind high ratios up to 1 MB (small files compress well)', async () => {
    const zip = rawZip([{ name: 'zeros.css', data: Buffer.alloc(MiB) }]);
    expect((await inspectArchive(zip)).files[0].size).toBe(MiB);
  });

  it('counts real inflated bytes: a bomb declaring a tiny size is still a bomb', async () => {
    const data = Buffer.alloc(50 * MiB);
    const zip = rawZip([{ name: 'innocent.html', data, compressed: deflateRawSync(data), declaredSize: 10 }]);
    expect(await refusal(zip)).toMatchObject({ code: 'BULK_ZIP_SUSPICIOUS_ENTRY', details: { entry: 'innocent.html' } });
  });

  it('refuses an entry that inflates beyond its declared size as BULK_ZIP_INVALID', async () => {
    const data = Buffer.from('<p>more than declared</p>');
    const zip = rawZip([{ name: 'a.html', data, compressed: deflateRawSync(data), declaredSize: 5 }]);
    expect(await refusal(zip)).toMatchObject({ code: 'BULK_ZIP_INVALID', details: { reason: 'size_mismatch' } });
  });

  it('refuses more than 300 MB expanded (BULK_ZIP_DECOMPRESSED_TOO_LARGE), counting real bytes over many entries', async () => {
    // 301 entries of 1 MB of zeros: each is allowed (up to 1 MB any ratio is), together they expand past 300 MB,
    // while the archive itself is about 300 KB and declares nothing unusual.
    const compressed = deflateRawSync(Buffer.alloc(MiB));
    const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `part${i}.bin`, data: Buffer.alloc(MiB), compressed }));
    expect((await inspectArchive(rawZip(entries(300)))).expandedBytes).toBe(300 * MiB);
    expect(await refusal(rawZip(entries(301)))).toMatchObject({ code: 'BULK_ZIP_DECOMPRESSED_TOO_LARGE', details: { max_bytes: 300 * MiB } });
  });

  it('refuses what is not a ZIP, damaged data and checksum mismatches as BULK_ZIP_INVALID', async () => {
    expect(await refusal(Buffer.from('this is not a zip file at all, just text'))).toMatchObject({
      code: 'BULK_ZIP_INVALID',
      // The ZIP library's own words stay out of the message (details.reason names the problem).
      message: 'The archive cannot be read: it is not a ZIP archive. Create the ZIP again with a standard tool (zip, 7-Zip, Finder, Explorer).',
      details: { reason: 'not_a_zip' },
    });
    const good = rawZip([{ name: 'a.html', data: '<p>hello hello hello hello</p>' }]);
    const damaged = Buffer.from(good);
    damaged.fill(0xff, 30 + 'a.html'.length, 30 + 'a.html'.length + 6);
    expect((await refusal(damaged)).code).toBe('BULK_ZIP_INVALID');
    expect(await refusal(rawZip([{ name: 'a.html', data: 'abc', crc: 1234 }]))).toMatchObject({ code: 'BULK_ZIP_INVALID', details: { reason: 'crc_mismatch' } });
  });

  it('refuses an encrypted entry as BULK_ZIP_INVALID (encrypted), asking for an archive without a password', async () => {
    const result = await refusal(rawZip([{ name: 'ok.html', data: '<p>ok</p>' }, { name: 'secret.html', data: '<p>secret</p>', encrypted: true }]));
    expect(result).toMatchObject({ code: 'BULK_ZIP_INVALID', details: { reason: 'encrypted', entry: 'secret.html' } });
    expect(result.message).toMatch(/without a password/);
  });

  it('refuses compression methods other than stored and deflated, even when the data happens to inflate', async () => {
    // Method 12 (bzip2) over deflated bytes: read as deflate it would pass, while other tools read it as bzip2.
    const result = await refusal(rawZip([{ name: 'a.html', data: '<p>a</p>', method: 12 }]));
    expect(result).toMatchObject({ code: 'BULK_ZIP_INVALID', details: { reason: 'unsupported_compression', entry: 'a.html' } });
  });

  it('counts stored entries against the 300 MB too: one stored byte past it is refused', async () => {
    const compressed = deflateRawSync(Buffer.alloc(MiB));
    const full = Array.from({ length: 300 }, (_, i) => ({ name: `part${i}.bin`, data: Buffer.alloc(MiB), compressed }));
    expect(await refusal(rawZip([...full, { name: 'last.css', data: 'x', method: 0 }]))).toMatchObject({ code: 'BULK_ZIP_DECOMPRESSED_TOO_LARGE' });
    expect((await inspectArchive(rawZip([...full, { name: 'empty.css', data: '', method: 0 }]))).expandedBytes).toBe(300 * MiB);
    // Folders and ignored entries are left out of the files, not out of the count: their bytes are unpacked too.
    expect(await refusal(rawZip([{ name: '__MACOSX/._part0.bin', data: 'x', method: 0 }, ...full]))).toMatchObject({ code: 'BULK_ZIP_DECOMPRESSED_TOO_LARGE' });
    expect(await refusal(rawZip([{ name: 'folder/', data: 'x', method: 0 }, ...full]))).toMatchObject({ code: 'BULK_ZIP_DECOMPRESSED_TOO_LARGE' });
  });

  it('keeps a nested archive as an ordinary file and never opens it', async () => {
    const inner = rawZip([{ name: 'inner.html', data: '<p>inner</p>' }, { name: '../escape.html', data: 'x' }]);
    const zip = rawZip([{ name: 'outer.html', data: '<p>outer</p>' }, { name: 'nested/inner.zip', data: inner, method: 0 }]);
    const archive = await inspectArchive(zip);
    expect(archive.files.map((f) => f.path)).toEqual(['outer.html', 'nested/inner.zip']);
    expect(await readLocation(zip, archive.files[1].location)).toEqual(inner);
  });

  it('accepts the root folder entry ./ that bsdtar (tar -a on macOS and Windows) writes first', async () => {
    const archive = await inspectArchive(rawZip([{ name: './' }, { name: './index.html', data: '<p>i</p>' }, { name: './css/' }, { name: './css/site.css', data: 'p{}' }]));
    expect(archive.files.map((f) => f.path)).toEqual(['index.html', 'css/site.css']);
    expect(archive.entryCount).toBe(4);
    // `./` and `././` are one folder named twice, refused as any other duplicate.
    expect(await refusal(rawZip([{ name: './' }, { name: '././' }, { name: 'a.html', data: 'x' }]))).toMatchObject({ code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason: 'duplicate' } });
    // A file named `.` is still no name.
    expect(await refusal(rawZip([{ name: '.', data: 'x' }]))).toMatchObject({ code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason: 'empty' } });
  });

  it('refuses a drive letter behind ./ (./C:/x.html is C:/x.html)', async () => {
    expect(await refusal(rawZip([{ name: './C:/x.html', data: 'x' }]))).toMatchObject({ code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason: 'absolute' } });
    expect(await refusal(rawZip([{ name: 'good.html', data: 'x', unicodeName: './c:/x.html' }]))).toMatchObject({ code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason: 'absolute' } });
  });

  it('reads names not flagged UTF-8 as UTF-8 when they are (macOS Archive Utility), else as CP437', async () => {
    const mac = await inspectArchive(rawZip([{ name: '', nameBytes: Buffer.from('site/cafe\u0301.png', 'utf8'), utf8Flag: false, data: 'png' }]));
    expect(mac.files.map((f) => f.path)).toEqual(['site/cafe\u0301.png']);
    const dos = await inspectArchive(rawZip([{ name: '', nameBytes: Buffer.from([0x63, 0x61, 0x66, 0x82, 0x2e, 0x68, 0x74, 0x6d, 0x6c]), utf8Flag: false, data: 'x' }]));
    expect(dos.files.map((f) => f.path)).toEqual(['caf\u00e9.html']);
  });

  it.each([
    ['a line feed', 0x0a],
    ['an escape', 0x1b],
    ['a carriage return', 0x0d],
    ['a delete', 0x7f],
  ])('refuses %s byte in a name not flagged UTF-8 (CP437 draws it as a symbol; other tools extract it as is)', async (_what, byte) => {
    const nameBytes = Buffer.from([0x61, byte, 0x2e, 0x68, 0x74, 0x6d, 0x6c]);
    expect(await refusal(rawZip([{ name: '', nameBytes, utf8Flag: false, data: 'x' }]))).toMatchObject({ code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason: 'control_character' } });
    // Also behind a clean Unicode name field: tools that ignore the field use the header name.
    expect(await refusal(rawZip([{ name: '', nameBytes, utf8Flag: false, unicodeName: 'a.html', data: 'x' }]))).toMatchObject({
      code: 'BULK_ZIP_UNSAFE_ENTRY',
      details: { reason: 'control_character' },
    });
  });

  it('accepts an empty file marked deflated that has no data at all', async () => {
    const zip = rawZip([{ name: 'empty.css', method: 8, compressed: Buffer.alloc(0) }, { name: 'a.html', data: '<p>a</p>' }]);
    const archive = await inspectArchive(zip);
    expect(archive.files.map((f) => [f.path, f.size])).toEqual([
      ['empty.css', 0],
      ['a.html', 8],
    ]);
    expect(await readLocation(zip, archive.files[0].location)).toEqual(Buffer.alloc(0));
    // Declaring a size it does not have is still refused.
    expect(await refusal(rawZip([{ name: 'e.css', method: 8, compressed: Buffer.alloc(0), declaredSize: 5 }]))).toMatchObject({ code: 'BULK_ZIP_INVALID' });
  });
});

describe('inspectArchive: overlapping entries', () => {
  it('refuses a quoted-overlap bomb (Fifield) as BULK_ZIP_INVALID before inflating it, not once 300 MB came out', async () => {
    // 400 entries that each inflate the same 1 MB kernel: 400 MB from a file of about 40 KB.
    const bomb = quotedOverlapBomb(400, Buffer.alloc(MiB - 64 * 1024));
    expect(bomb.length).toBeLessThan(100 * 1024);
    expect(await refusal(bomb)).toMatchObject({ code: 'BULK_ZIP_INVALID', details: { reason: 'overlapping_entries' } });
  });

  it('refuses entries whose data overlaps even when the total stays small', async () => {
    const small = quotedOverlapBomb(3, Buffer.from('p{color:red}'));
    expect(await refusal(small)).toMatchObject({ code: 'BULK_ZIP_INVALID', details: { reason: 'overlapping_entries' } });
  });

  it('refuses an entry whose local header and data lie inside the central directory', async () => {
    const data = Buffer.from('<p>a</p>');
    const fields = { name: 'a.html', crc: crc32(data), compressed: data.length, size: data.length };
    const local = localHeader(fields);
    const first = centralHeader({ ...fields, offset: 0 });
    // The second entry's local header and data are the file comment of its own central record.
    const hidden = { name: 'b.html', crc: crc32(data), compressed: data.length, size: data.length };
    const hiddenLocal = Buffer.concat([localHeader(hidden), data]);
    const bodyLength = local.length + data.length;
    const second = centralHeader({ ...hidden, offset: bodyLength + first.length + 46 + 'b.html'.length, comment: hiddenLocal });
    expect(await refusal(zipOf([local, data], [first, second]))).toMatchObject({ code: 'BULK_ZIP_INVALID', details: { reason: 'overlapping_entries' } });
  });

  it('still reads entries laid out back to back, with and without data descriptors', async () => {
    const archive = await inspectArchive(rawZip([{ name: 'a.html', data: '<p>a</p>' }, { name: 'b.css', data: 'p{}', method: 0 }, { name: 'e.css' }]));
    expect(archive.files.map((f) => f.path)).toEqual(['a.html', 'b.css', 'e.css']);
  });
});

describe('inspectArchive: data descriptors', () => {
  const data = Buffer.from('<p>described</p>');
  const deflated = deflateRawSync(data);
  const withDescriptor = (descriptor: Buffer) => {
    const fields = { name: 'a.html', flags: 0x808, method: 8 };
    const local = localHeader(fields);
    const central = centralHeader({ ...fields, crc: crc32(data), compressed: deflated.length, size: data.length, offset: 0 });
    return zipOf([local, deflated, descriptor], [central]);
  };

  it('reads an entry whose local header leaves sizes at 0 for a true descriptor, with or without its signature', async () => {
    for (const signature of [true, false]) {
      const zip = withDescriptor(dataDescriptor(crc32(data), deflated.length, data.length, signature));
      const archive = await inspectArchive(zip);
      expect((await readLocation(zip, archive.files[0].location)).toString()).toBe('<p>described</p>');
    }
  });

  it.each<[string, Buffer]>([
    ['a different checksum', dataDescriptor(0xdeadbeef, deflated.length, data.length)],
    ['a different compressed size', dataDescriptor(crc32(data), deflated.length + 1000, data.length)],
    ['a different size', dataDescriptor(crc32(data), deflated.length, 5)],
    ['no descriptor at all', Buffer.alloc(0)],
  ])('refuses a data descriptor that says something else than the central directory: %s', async (_what, descriptor) => {
    expect(await refusal(withDescriptor(descriptor))).toMatchObject({ code: 'BULK_ZIP_INVALID', details: { reason: 'data_descriptor_mismatch' } });
  });
});

describe('inspectArchive: names', () => {
  it.each<[string, Buffer]>([
    ['an invalid byte', Buffer.from([0x61, 0xff, 0x2e, 0x68, 0x74, 0x6d, 0x6c])],
    // Overlong encodings of "." (0xC0 0xAE): a lenient decoder reads "../x.html".
    ['overlong dots', Buffer.concat([Buffer.from([0xc0, 0xae, 0xc0, 0xae]), Buffer.from('/x.html')])],
  ])('refuses a name flagged UTF-8 that is not UTF-8 (%s) as BULK_ZIP_UNSAFE_ENTRY', async (_what, nameBytes) => {
    expect(await refusal(rawZip([{ name: '', nameBytes, data: 'x' }]))).toMatchObject({ code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason: 'invalid_utf8' } });
  });
});

describe('inspectArchive: ZIP64 and end records', () => {
  const data = Buffer.from('<p>64</p>');
  const zip64Field = (...values: number[]) => {
    const field = Buffer.alloc(4 + 8 * values.length);
    field.writeUInt16LE(0x0001, 0);
    field.writeUInt16LE(8 * values.length, 2);
    values.forEach((v, i) => field.writeBigUInt64LE(BigInt(v), 4 + 8 * i));
    return field;
  };
  /** One stored entry with every size in ZIP64 fields, and the ZIP64 end records. */
  const zip64 = (localField = zip64Field(data.length, data.length)) => {
    const fields = { name: 'a.html', crc: crc32(data), compressed: 0xffffffff, size: 0xffffffff };
    const local = Buffer.concat([localHeader({ ...fields, extra: localField }), data]);
    const central = centralHeader({ ...fields, offset: 0xffffffff, extra: zip64Field(data.length, data.length, 0) });
    const end64 = Buffer.alloc(56);
    end64.writeUInt32LE(0x06064b50, 0);
    end64.writeBigUInt64LE(44n, 4);
    end64.writeBigUInt64LE(1n, 24);
    end64.writeBigUInt64LE(1n, 32);
    end64.writeBigUInt64LE(BigInt(central.length), 40);
    end64.writeBigUInt64LE(BigInt(local.length), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(BigInt(local.length + central.length), 8);
    locator.writeUInt32LE(1, 16);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(0xffff, 8);
    end.writeUInt16LE(0xffff, 10);
    end.writeUInt32LE(0xffffffff, 12);
    end.writeUInt32LE(0xffffffff, 16);
    return Buffer.concat([local, central, end64, locator, end]);
  };
  const end64At = (zip: Buffer) => zip.length - 22 - 20 - 56;

  it('reads a real ZIP64 archive', async () => {
    const zip = zip64();
    const archive = await inspectArchive(zip);
    expect((await readLocation(zip, archive.files[0].location)).toString()).toBe('<p>64</p>');
  });

  it('refuses a local ZIP64 field that gives other sizes than the central directory, or none', async () => {
    expect(await refusal(zip64(zip64Field(data.length, data.length + 1)))).toMatchObject({ code: 'BULK_ZIP_INVALID', details: { reason: 'local_header_mismatch' } });
    expect(await refusal(zip64(zip64Field(5, data.length)))).toMatchObject({ code: 'BULK_ZIP_INVALID', details: { reason: 'local_header_mismatch' } });
    expect(await refusal(zip64(Buffer.alloc(0)))).toMatchObject({ code: 'BULK_ZIP_INVALID', details: { reason: 'local_header_mismatch' } });
  });

  it.each<[string, () => Buffer, object]>([
    ['ZIP64 end record counting 2^40 entries', () => {
      const zip = zip64();
      zip.writeBigUInt64LE(2n ** 40n, end64At(zip) + 32);
      return zip;
    }, { code: 'BULK_ZIP_TOO_MANY_ENTRIES' }],
    ['ZIP64 directory offset past the end of the file', () => {
      const zip = zip64();
      zip.writeBigUInt64LE(2n ** 50n, end64At(zip) + 48);
      return zip;
    }, { code: 'BULK_ZIP_INVALID', details: { reason: 'bad_directory' } }],
    ['0xFFFFFFFF sizes with no ZIP64 field', () => {
      const zip = rawZip([{ name: 'a.css', data: 'xyz', method: 0 }]);
      const central = zip.readUInt32LE(zip.length - 6);
      for (const at of [18, 22, central + 20, central + 24]) zip.writeUInt32LE(0xffffffff, at);
      return zip;
    }, { code: 'BULK_ZIP_INVALID', details: { reason: 'bad_local_header' } }],
    ['a directory offset past the end of the file', () => {
      const zip = rawZip([{ name: 'a.html', data: 'x' }]);
      zip.writeUInt32LE(0x7fffffff, zip.length - 6);
      return zip;
    }, { code: 'BULK_ZIP_INVALID', details: { reason: 'bad_directory' } }],
    ['an end record counting more entries than the directory holds', () => {
      const zip = rawZip([{ name: 'a.html', data: 'x' }]);
      zip.writeUInt16LE(3, zip.length - 14);
      zip.writeUInt16LE(3, zip.length - 12);
      return zip;
    }, { code: 'BULK_ZIP_INVALID', details: { reason: 'bad_directory' } }],
    ['junk before the archive (a self-extractor whose offsets were not adjusted)', () => Buffer.concat([Buffer.alloc(1000, 0x90), rawZip([{ name: 'a.html', data: 'x' }])]), {
      code: 'BULK_ZIP_INVALID',
    }],
    ['a compressed size running past the end of the file', () => {
      const zip = rawZip([{ name: 'a.css', data: 'xyz', method: 0 }]);
      zip.writeUInt32LE(1e6, 18);
      zip.writeUInt32LE(1e6, zip.readUInt32LE(zip.length - 6) + 20);
      return zip;
    }, { code: 'BULK_ZIP_INVALID' }],
    ['a stored entry declaring 4 GB', () => {
      const zip = rawZip([{ name: 'a.css', data: 'xyz', method: 0 }]);
      zip.writeUInt32LE(0xfffffff0, 22);
      zip.writeUInt32LE(0xfffffff0, zip.readUInt32LE(zip.length - 6) + 24);
      return zip;
    }, { code: 'BULK_ZIP_INVALID', details: { reason: 'size_mismatch' } }],
    ['an LZMA entry', () => rawZip([{ name: 'a.html', data: 'x', method: 14 }]), { code: 'BULK_ZIP_INVALID', details: { reason: 'unsupported_compression' } }],
    ['an AES-encrypted entry (method 99)', () => rawZip([{ name: 'a.html', data: 'x', method: 99, encrypted: true }]), { code: 'BULK_ZIP_INVALID', details: { reason: 'encrypted' } }],
    ['a local name a.html whose central name is ../x', () => {
      const x = Buffer.from('<p>x</p>');
      const fields = { crc: crc32(x), compressed: x.length, size: x.length };
      return zipOf([localHeader({ name: 'a.html', ...fields }), x], [centralHeader({ name: '../x', ...fields })]);
    }, { code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason: 'parent_reference' } }],
    ['a 64 KB name', () => rawZip([{ name: `${'a'.repeat(65_000)}.html`, data: 'x' }]), { code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason: 'too_long' } }],
    ['a drive-relative name C:x.html', () => rawZip([{ name: 'C:x.html', data: 'x' }]), { code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason: 'absolute' } }],
    ['./a/../../b', () => rawZip([{ name: './a/../../b', data: 'x' }]), { code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason: 'parent_reference' } }],
    ['a UNC name //server/share/x.html', () => rawZip([{ name: '//server/share/x.html', data: 'x' }]), { code: 'BULK_ZIP_UNSAFE_ENTRY', details: { reason: 'absolute' } }],
  ])('refuses %s', async (_what, make, expected) => {
    expect(await refusal(make())).toMatchObject(expected);
  });

  it('reads %2e%2e in a name as the literal text it is (nothing decodes entry names)', async () => {
    const archive = await inspectArchive(rawZip([{ name: '%2e%2e/x.html', data: 'x' }]));
    expect(archive.files.map((f) => f.path)).toEqual(['%2e%2e/x.html']);
  });
});
