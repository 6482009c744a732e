import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { LAYER_FONT_FILE } from '../../functions/adapters/chromium/fonts';
import { ChromiumLayer, type LayerInputs } from '../../lib/chromium-layer';

/**
 * The layer asset's identity (its S3 key, its staging directory) covers the fonts: with CDK's default (a hash of the
 * binaries' directory only), a layer whose fonts changed kept its key, and a stale copy without the fonts was deployed.
 */
describe('Chromium layer asset identity', () => {
  const fontSource = path.resolve(__dirname, '../../node_modules/dejavu-fonts-ttf/ttf');
  const binDir = path.resolve(__dirname, '../../node_modules/@sparticuz/chromium/bin');
  let work: string;
  let fontDir: string;
  beforeAll(() => {
    work = mkdtempSync(path.join(os.tmpdir(), 'layer-hash-'));
    fontDir = path.join(work, 'ttf');
    mkdirSync(fontDir);
    for (const f of readdirSync(fontSource).filter((f) => LAYER_FONT_FILE.test(f))) copyFileSync(path.join(fontSource, f), path.join(fontDir, f));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** The S3 key the layer would be deployed from, built from `inputs` (no bundling: only the identity is computed). */
  function layerKey(inputs: LayerInputs): string {
    const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Layer');
    new ChromiumLayer(stack, 'Chromium', inputs);
    return Object.values(Template.fromStack(stack).findResources('AWS::Lambda::LayerVersion'))[0].Properties.Content.S3Key;
  }

  it('changes when a font file changes, a font is added or the font selection changes, with the same binaries', () => {
    const base = layerKey({ binDir, fontDir, fontFile: LAYER_FONT_FILE });
    expect(layerKey({ binDir, fontDir, fontFile: LAYER_FONT_FILE })).toBe(base);
    expect(layerKey({ binDir, fontDir, fontFile: /^DejaVuSans\.ttf$/ })).not.toBe(base);
    const [first] = readdirSync(fontDir).filter((f) => LAYER_FONT_FILE.test(f));
    writeFileSync(path.join(fontDir, first), 'not the same font');
    const edited = layerKey({ binDir, fontDir, fontFile: LAYER_FONT_FILE });
    expect(edited).not.toBe(base);
    writeFileSync(path.join(fontDir, 'DejaVuSans-Extra.ttf'), 'another font');
    expect(layerKey({ binDir, fontDir, fontFile: /\.ttf$/ })).not.toBe(edited);
  });
});
