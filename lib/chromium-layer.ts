import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { DockerImage } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { LAYER_FONT_FILE } from '../functions/adapters/chromium/fonts';

/** Where render functions find the compressed Chromium (CHROMIUM_PACK_DIR). */
export const CHROMIUM_PACK_DIR = '/opt/chromium';
/** Where they find the fonts shipped with it (CHROMIUM_FONT_DIR): Lambda has no system fonts. */
export const CHROMIUM_FONT_DIR = '/opt/fonts';

/**
 * The shared Chromium layer: @sparticuz/chromium's compressed binaries under /opt/chromium. Built by
 * copying files from node_modules (no Docker); the JavaScript side is bundled into each render function.
 */
export class ChromiumLayer extends Construct {
  readonly layer: lambda.LayerVersion;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const binDir = path.resolve(__dirname, '../node_modules/@sparticuz/chromium/bin');
    const fontSource = path.resolve(__dirname, '../node_modules/dejavu-fonts-ttf/ttf');
    this.layer = new lambda.LayerVersion(this, 'Layer', {
      description: 'Chromium for PDF rendering (@sparticuz/chromium binaries) and DejaVu fonts',
      compatibleRuntimes: [lambda.Runtime.NODEJS_22_X],
      compatibleArchitectures: [lambda.Architecture.X86_64],
      code: lambda.Code.fromAsset(binDir, {
        bundling: {
          image: DockerImage.fromRegistry('unused-local-bundling-only'),
          local: {
            tryBundle(outputDir: string) {
              const target = path.join(outputDir, path.basename(CHROMIUM_PACK_DIR));
              mkdirSync(target, { recursive: true });
              for (const file of readdirSync(binDir)) copyFileSync(path.join(binDir, file), path.join(target, file));
              const fonts = path.join(outputDir, path.basename(CHROMIUM_FONT_DIR));
              mkdirSync(fonts, { recursive: true });
              for (const file of readdirSync(fontSource).filter((f) => LAYER_FONT_FILE.test(f))) copyFileSync(path.join(fontSource, file), path.join(fonts, file));
              return true;
            },
          },
        },
      }),
    });
  }
}
