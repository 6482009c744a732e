import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { DockerImage } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';

/** Where render functions find the compressed Chromium (CHROMIUM_PACK_DIR). */
export const CHROMIUM_PACK_DIR = '/opt/chromium';

/**
 * The shared Chromium layer: @sparticuz/chromium's compressed binaries under /opt/chromium. Built by
 * copying files from node_modules (no Docker); the JavaScript side is bundled into each render function.
 */
export class ChromiumLayer extends Construct {
  readonly layer: lambda.LayerVersion;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const binDir = path.resolve(__dirname, '../node_modules/@sparticuz/chromium/bin');
    this.layer = new lambda.LayerVersion(this, 'Layer', {
      description: 'Chromium for PDF rendering (@sparticuz/chromium binaries)',
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
              return true;
            },
          },
        },
      }),
    });
  }
}
