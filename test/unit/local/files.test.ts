import fs, { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadOrCreateIssuer } from '../../../local/issuer';
import { loadOrCreateSecret } from '../../../local/secrets';

/** Keys generated on first start are written in one step: a kill mid-write must not leave an empty key to be used. */
describe('local key files', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'local-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a generated secret through a temporary file renamed into place, readable by its owner only, and reads it back', () => {
    const renames = jest.spyOn(fs, 'renameSync');
    try {
      const file = path.join(dir, 'secret');
      const secret = loadOrCreateSecret(file);
      expect(renames).toHaveBeenCalledWith(expect.stringMatching(/secret\.\d+\.tmp$/), file);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readFileSync(file, 'utf8')).toBe(secret);
      expect(loadOrCreateSecret(file)).toBe(secret);
    } finally {
      renames.mockRestore();
    }
  });

  it('writes the token signing key the same way', async () => {
    const renames = jest.spyOn(fs, 'renameSync');
    try {
      await loadOrCreateIssuer(path.join(dir, 'issuer'));
      expect(renames).toHaveBeenCalledWith(expect.stringMatching(/signing-key\.json\.\d+\.tmp$/), path.join(dir, 'issuer', 'signing-key.json'));
      expect(statSync(path.join(dir, 'issuer', 'signing-key.json')).mode & 0o777).toBe(0o600);
    } finally {
      renames.mockRestore();
    }
  });
});
