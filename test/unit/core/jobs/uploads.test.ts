import { encodeTime, ulid } from 'ulid';
import { claimUploads, ownUpload, uploadClaimKind, uploadIssuedAt, uploadOwner, withUploadsClaimed } from '../../../../functions/core/jobs/uploads';
import { newJob } from '../../../../functions/core/jobs/job';
import { MemoryBlobs, MemoryJobs, MemorySlots } from '../../../support/memory';

const now = new Date('2026-11-21T12:00:00Z');
const clock = { now: () => now };
const refusal = { subject: 'The ZIP', kind: 'bulk' as const, details: { input_index: 2 } };
/** A key as POST …/upload-url issues it, `agoMs` before now. */
const keyOf = (account: string, agoMs = 0) => `uploads/${account}/bulk/${encodeTime(now.getTime() - agoMs, 10)}${ulid().slice(10)}.zip`;

describe('uploadIssuedAt', () => {
  it('reads the issue time from the ULID of the file name, whatever the extension', () => {
    expect(uploadIssuedAt(keyOf('acc', 5000))).toEqual(new Date(now.getTime() - 5000));
    expect(uploadIssuedAt(`uploads/acc/pdf/${encodeTime(now.getTime(), 10)}${ulid().slice(10)}.pdf`)).toEqual(now);
  });
  it('is null for keys we never issue', () => {
    expect(uploadIssuedAt('uploads/acc/bulk/report.zip')).toBeNull();
    expect(uploadIssuedAt('uploads/acc/bulk/')).toBeNull();
  });
});

describe('ownUpload', () => {
  it("answers storage's facts for the caller's present upload", async () => {
    const blobs = new MemoryBlobs();
    const key = keyOf('acc', 3_600_000);
    await blobs.put(key, Buffer.alloc(42), 'application/zip');
    expect(await ownUpload({ blobs, clock }, 'acc', key, refusal)).toEqual({ size_bytes: 42, content_type: 'application/zip' });
  });

  it("takes an upload exactly one day old by the service's clock, and refuses it a millisecond later", async () => {
    const blobs = new MemoryBlobs();
    const key = keyOf('acc', 86_400_000);
    await blobs.put(key, Buffer.alloc(1), 'application/zip');
    await expect(ownUpload({ blobs, clock }, 'acc', key, refusal)).resolves.toEqual({ size_bytes: 1, content_type: 'application/zip' });
    const later = { now: () => new Date(now.getTime() + 1) };
    await expect(ownUpload({ blobs, clock: later }, 'acc', key, refusal)).rejects.toMatchObject({ code: 'UPLOAD_NOT_FOUND', details: { s3_key: key } });
  });

  it("refuses another account's upload with 403 FORBIDDEN, even when it exists", async () => {
    const blobs = new MemoryBlobs();
    const key = keyOf('other');
    await blobs.put(key, Buffer.alloc(1), 'application/zip');
    await expect(ownUpload({ blobs, clock }, 'acc', key, refusal)).rejects.toMatchObject({ code: 'FORBIDDEN', details: { s3_key: key, input_index: 2 } });
  });

  it.each([
    ['outside the uploads area', () => 'outputs/acc/x.zip', true],
    ['in the uploads area that names no account', () => 'uploads/nope.zip', false],
    ["shaped like another account's but not issued by us", () => 'uploads/other/bulk/nope.zip', false],
    ['with extra folders', () => `uploads/other/bulk/x/${ulid()}.zip`, false],
    ['with a .. segment', () => `uploads/acc/../other/${ulid()}.zip`, false],
    ['never uploaded', () => keyOf('acc'), false],
    ['older than a day', () => keyOf('acc', 86_400_000 + 1), true],
    ['not issued by us (no ULID)', () => 'uploads/acc/bulk/mine.zip', true],
    ['with a NUL after a key we issued', () => `${keyOf('acc')}\u0000`, true],
    ['with a control character inside the name', () => keyOf('acc').replace('.zip', '\u0001.zip'), true],
    ['issued by another upload route (a PDF upload sent as a ZIP)', () => keyOf('acc').replace('/bulk/', '/pdf/').replace('.zip', '.pdf'), true],
    ['of a kind no route issues', () => keyOf('acc').replace('/bulk/', '/lists/'), true],
  ])('answers 404 UPLOAD_NOT_FOUND for a key %s', async (_what, key, stored) => {
    const blobs = new MemoryBlobs();
    const k = key();
    if (stored) await blobs.put(k, Buffer.alloc(1), 'application/zip');
    await expect(ownUpload({ blobs, clock }, 'acc', k, refusal)).rejects.toMatchObject({ code: 'UPLOAD_NOT_FOUND', details: { s3_key: k } });
  });
});

describe('uploadOwner', () => {
  it('names the account of a key shaped as we issue them, and nothing else', () => {
    expect(uploadOwner(keyOf('acc-1_x'))).toBe('acc-1_x');
    expect(uploadOwner(`uploads/3f0c/pdf/${ulid()}.pdf`)).toBe('3f0c');
    for (const key of ['uploads/nope.zip', 'uploads/acc/bulk/mine.zip', 'uploads//bulk/01J00000000000000000000000.zip', 'outputs/acc/bulk/01J00000000000000000000000.zip', `uploads/acc/bulk/${ulid()}`, `uploads/a.b/bulk/${ulid()}.zip`]) {
      expect(uploadOwner(key)).toBeNull();
    }
  });
});

describe('claimUploads', () => {
  it('gives back the uploads it took when taking a later one fails (storage trouble): a retry of the submission may use them', async () => {
    const slots = new MemorySlots();
    const [a, b] = [keyOf('acc'), keyOf('acc')];
    const acquire = slots.acquire.bind(slots);
    slots.acquire = async (input) => {
      if (input.kind === uploadClaimKind(b)) throw Object.assign(new Error('injected DynamoDB outage'), { name: 'InternalServerError' });
      return acquire(input);
    };
    const claim = { accountId: 'acc', jobId: 'job_1', leaseSeconds: 3600, uploads: [a, b].map((key) => ({ key, refusal })) };
    await expect(claimUploads({ slots, jobs: new MemoryJobs(), clock }, claim)).rejects.toThrow('injected DynamoDB outage');
    expect(slots.held.size).toBe(0);
  });
});

describe('withUploadsClaimed', () => {
  it('keeps the claims of a job written after all when its submission fails (a lost reply): the job still uses the upload', async () => {
    const slots = new MemorySlots();
    const jobs = new MemoryJobs();
    const key = keyOf('acc');
    const claim = { accountId: 'acc', jobId: 'job_1', leaseSeconds: 3600, uploads: [{ key, refusal }] };
    const submit = async () => {
      await jobs.put(newJob({ job_id: 'job_1', account_id: 'acc', job_type: 'bulk', status: 'queued', now }));
      throw new Error('reply lost');
    };
    await expect(withUploadsClaimed({ slots, jobs, clock }, claim, submit)).rejects.toThrow('reply lost');
    expect([...slots.held.values()]).toEqual(['job_1']);
    // A second job given the same upload is refused while the first holds it.
    await expect(claimUploads({ slots, jobs, clock }, { ...claim, jobId: 'job_2' })).rejects.toMatchObject({ code: 'UPLOAD_NOT_FOUND', details: { reason: 'in_use', job_id: 'job_1' } });
  });

  it('gives the claims back when the job was not written', async () => {
    const slots = new MemorySlots();
    const claim = { accountId: 'acc', jobId: 'job_1', leaseSeconds: 3600, uploads: [{ key: keyOf('acc'), refusal }] };
    await expect(withUploadsClaimed({ slots, jobs: new MemoryJobs(), clock }, claim, async () => Promise.reject(new Error('throttled')))).rejects.toThrow('throttled');
    expect(slots.held.size).toBe(0);
  });
});
