import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { AssetHashType, DockerImage, FileSystem } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { LAYER_FONT_FILE } from '../functions/adapters/chromium/fonts';

/** Where render functions find the compressed Chromium (CHROMIUM_PACK_DIR). */
export const CHROMIUM_PACK_DIR = '/opt/chromium';
/** Where they find the fonts shipped with it (CHROMIUM_FONT_DIR): Lambda has no system fonts. */
export const CHROMIUM_FONT_DIR = '/opt/fonts';

const BIN_DIR = path.resolve(__dirname, '../node_modules/@sparticuz/chromium/bin');
const FONT_SOURCE = path.resolve(__dirname, '../node_modules/dejavu-fonts-ttf/ttf');
/** Bump when the layer's layout (what goes where) changes without any input file changing. */
const LAYOUT_VERSION = 2;

/** What the layer is built from. */
export interface LayerInputs {
  binDir: string;
  fontDir: string;
  fontFile: RegExp;
}

const LAYER_INPUTS: LayerInputs = { binDir: BIN_DIR, fontDir: FONT_SOURCE, fontFile: LAYER_FONT_FILE };

/**
 * The layer asset's identity: everything that decides its contents (the Chromium binaries, the font files, which
 * fonts are picked, the layout). CDK's default hashes only the asset's source directory (the binaries), so a layer
 * whose fonts changed kept its old hash: a stale staged copy in cdk.out, or the copy already in the bootstrap
 * bucket, was deployed instead, without the fonts.
 */
function layerAssetHash(inputs: LayerInputs = LAYER_INPUTS): string {
  const fonts = readdirSync(inputs.fontDir)
    .filter((f) => inputs.fontFile.test(f))
    .sort()
    .map((f) => `${f}:${FileSystem.fingerprint(path.join(inputs.fontDir, f))}`);
  return createHash('sha256')
    .update(JSON.stringify({ layout: LAYOUT_VERSION, chromium: FileSystem.fingerprint(inputs.binDir), fonts }))
    .digest('hex');
}

/**
 * The shared Chromium layer: @sparticuz/chromium's compressed binaries under /opt/chromium. Built by
 * copying files from node_modules (no Docker); the JavaScript side is bundled into each render function.
 */
export class ChromiumLayer extends Construct {
  readonly layer: lambda.LayerVersion;

  /** `inputs` other than the real ones are for tests. */
  constructor(scope: Construct, id: string, inputs: LayerInputs = LAYER_INPUTS) {
    super(scope, id);
    const { binDir, fontDir: fontSource, fontFile } = inputs;
    this.layer = new lambda.LayerVersion(this, 'Layer', {
      description: 'Chromium for PDF rendering (@sparticuz/chromium binaries) and DejaVu fonts',
      compatibleRuntimes: [lambda.Runtime.NODEJS_22_X],
      compatibleArchitectures: [lambda.Architecture.X86_64],
      code: lambda.Code.fromAsset(binDir, {
        assetHashType: AssetHashType.CUSTOM,
        assetHash: layerAssetHash(inputs),
        bundling: {
          image: DockerImage.fromRegistry('unused-local-bundling-only'),
          local: {
            tryBundle(outputDir: string) {
              const target = path.join(outputDir, path.basename(CHROMIUM_PACK_DIR));
              mkdirSync(target, { recursive: true });
              for (const file of readdirSync(binDir)) copyFileSync(path.join(binDir, file), path.join(target, file));
              const fonts = path.join(outputDir, path.basename(CHROMIUM_FONT_DIR));
              mkdirSync(fonts, { recursive: true });
              for (const file of readdirSync(fontSource).filter((f) => fontFile.test(f))) copyFileSync(path.join(fontSource, file), path.join(fonts, file));
              return true;
            },
          },
        },
      }),
    });
  }
}
