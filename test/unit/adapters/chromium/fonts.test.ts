import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeFontConfig } from '../../../../functions/adapters/chromium/fonts';
import { tempDir } from '../../../support/temp';

describe('writeFontConfig', () => {
  it('writes one config per font directory in the system temp dir by default (Lambda), its font cache inside it', () => {
    const fontDir = path.join(tempDir('fonts-'), 'fonts');
    const dir = writeFontConfig(fontDir);
    try {
      expect(path.dirname(dir)).toBe(tmpdir());
      expect(writeFontConfig(fontDir)).toBe(dir);
      const xml = readFileSync(path.join(dir, 'fonts.conf'), 'utf8');
      expect(xml).toContain(`<dir>${fontDir}</dir>`);
      expect(xml).toContain(`<cachedir>${path.join(dir, 'cache')}</cachedir>`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes it where it is told (the local stack: under DATA_DIR)', () => {
    const home = tempDir('chromium-files-');
    const dir = writeFontConfig(path.join(home, 'fonts'), path.join(home, 'fontconfig'));
    expect(dir).toBe(path.join(home, 'fontconfig'));
    expect(readFileSync(path.join(dir, 'fonts.conf'), 'utf8')).toContain(`<cachedir>${path.join(dir, 'cache')}</cachedir>`);
  });
});
