/** `cdk synth` / `cdk deploy`: the whole service as one stack. Settings come from CDK context (cdk.json or -c). */
import { App } from 'aws-cdk-lib';
import { PdfServiceStack } from '../lib/pdf-service-stack';

const app = new App();
const context = (name: string) => app.node.tryGetContext(name) as string | undefined;

new PdfServiceStack(app, context('stackName') ?? 'PdfService', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  integrationTimeoutSeconds: context('integrationTimeoutSeconds') ? Number(context('integrationTimeoutSeconds')) : undefined,
  stripePriceIds: { starter: context('stripePriceStarter'), business: context('stripePriceBusiness') },
});
