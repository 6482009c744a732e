import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { shippedFontFiles } from '../../functions/adapters/chromium/shipped-fonts';
import { ChromiumLayer, type LayerInputs } from '../../lib/chromium-layer';
import { tempDir } from '../support/temp';

/**
 * The layer asset's identity (its S3 key, its staging directory) covers the fonts: with CDK's default (a hash of the
 * binaries' directory only), a layer whose fonts changed kept its key, and a stale copy without the fonts was deployed.
 */
describe('Chromium layer asset identity', () => {
  const binDir = path.resolve(__dirname, '../../node_modules/@sparticuz/chromium/bin');
  let work: string;
  let fontFiles: string[];
  beforeAll(() => {
    work = mkdtempSync(path.join(os.tmpdir(), 'layer-hash-'));
    // Copies of the small DejaVu files (the Noto ones are ~10 MB each), which the test edits.
    fontFiles = shippedFontFiles()
      .filter((file) => path.basename(file).startsWith('DejaVu'))
      .map((file) => {
        const copy = path.join(work, path.basename(file));
        copyFileSync(file, copy);
        return copy;
      });
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** The S3 key the layer would be deployed from, built from `inputs` (no bundling: only the identity is computed). */
  function layerKey(inputs: LayerInputs): string {
    const stack = new Stack(new App({ outdir: tempDir('cdk.out-'), context: { 'aws:cdk:bundling-stacks': [] } }), 'Layer');
    new ChromiumLayer(stack, 'Chromium', inputs);
    return Object.values(Template.fromStack(stack).findResources('AWS::Lambda::LayerVersion'))[0].Properties.Content.S3Key;
  }

  it('changes when a font file changes, a font is added or the font selection changes, with the same binaries', () => {
    const base = layerKey({ binDir, fontFiles });
    expect(layerKey({ binDir, fontFiles: [...fontFiles].reverse() })).toBe(base);
    expect(layerKey({ binDir, fontFiles: fontFiles.slice(1) })).not.toBe(base);
    writeFileSync(fontFiles[0], 'not the same font');
    const edited = layerKey({ binDir, fontFiles });
    expect(edited).not.toBe(base);
    const extra = path.join(work, 'DejaVuSans-Extra.ttf');
    writeFileSync(extra, 'another font');
    expect(layerKey({ binDir, fontFiles: [...fontFiles, extra] })).not.toBe(edited);
  });

  it("stays well inside Lambda's 250 MB for a function and its layers, unzipped (Chromium and the fonts: ~130 MB)", () => {
    const bytes = [...readdirSync(binDir).map((file) => path.join(binDir, file)), ...shippedFontFiles()].reduce((sum, file) => sum + statSync(file).size, 0);
    expect(bytes).toBeLessThan(200 * 1e6); // room for the render functions' own code
  });
});
