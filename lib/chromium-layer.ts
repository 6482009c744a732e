import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { AssetHashType, DockerImage, FileSystem } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { shippedFontFiles, shippedFontsProcessing, stageFonts } from '../functions/adapters/chromium/shipped-fonts';

/** Where render functions find the compressed Chromium (CHROMIUM_PACK_DIR). */
export const CHROMIUM_PACK_DIR = '/opt/chromium';
/** Where they find the fonts shipped with it (CHROMIUM_FONT_DIR): Lambda has no system fonts. */
export const CHROMIUM_FONT_DIR = '/opt/fonts';

const BIN_DIR = path.resolve(__dirname, '../node_modules/@sparticuz/chromium/bin');
/** Bump when the layer's layout (what goes where) changes without any input file changing. */
const LAYOUT_VERSION = 3;

/** What the layer is built from: Chromium's compressed binaries and the font files (see shippedFontFiles). */
export interface LayerInputs {
  binDir: string;
  fontFiles: string[];
}

const layerInputs = (): LayerInputs => ({ binDir: BIN_DIR, fontFiles: shippedFontFiles() });

/**
 * The layer asset's identity: everything that decides its contents (the Chromium binaries, the font files, which
 * fonts are picked and how they are processed, the layout). CDK's default hashes only the asset's source directory (the binaries), so a layer
 * whose fonts changed kept its old hash: a stale staged copy in cdk.out, or the copy already in the bootstrap
 * bucket, was deployed instead, without the fonts.
 */
function layerAssetHash(inputs: LayerInputs): string {
  const fonts = inputs.fontFiles.map((file) => `${path.basename(file)}:${FileSystem.fingerprint(file)}`).sort();
  return createHash('sha256')
    .update(JSON.stringify({ layout: LAYOUT_VERSION, chromium: FileSystem.fingerprint(inputs.binDir), fonts, processing: shippedFontsProcessing() }))
    .digest('hex');
}

/**
 * The shared Chromium layer: @sparticuz/chromium's compressed binaries under /opt/chromium. Built by
 * copying files from node_modules (no Docker); the JavaScript side is bundled into each render function.
 */
export class ChromiumLayer extends Construct {
  readonly layer: lambda.LayerVersion;

  /** `inputs` other than the real ones are for tests. */
  constructor(scope: Construct, id: string, inputs: LayerInputs = layerInputs()) {
    super(scope, id);
    const { binDir, fontFiles } = inputs;
    this.layer = new lambda.LayerVersion(this, 'Layer', {
      description: 'Chromium for PDF rendering (@sparticuz/chromium binaries), DejaVu and Noto fonts',
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
              stageFonts(fontFiles, path.join(outputDir, path.basename(CHROMIUM_FONT_DIR)), 'copy');
              return true;
            },
          },
        },
      }),
    });
  }
}
