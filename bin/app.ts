/** `cdk synth` / `cdk deploy`: the whole service as one stack. Settings come from CDK context (cdk.json or -c). */
import { App } from 'aws-cdk-lib';
import { PdfServiceStack } from '../lib/pdf-service-stack';

const app = new App();
const context = (name: string) => app.node.tryGetContext(name) as string | undefined;

new PdfServiceStack(app, context('stackName') ?? 'PdfService', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  integrationTimeoutSeconds: context('integrationTimeoutSeconds') ? Number(context('integrationTimeoutSeconds')) : undefined,
  // -c maxFunctionMemoryMb=3008: for a new AWS account whose Lambda memory quota is still below 4096 MB
  maxFunctionMemoryMb: context('maxFunctionMemoryMb') ? Number(context('maxFunctionMemoryMb')) : undefined,
  stripePriceIds: { starter: context('stripePriceStarter'), business: context('stripePriceBusiness') },
  // -c stripePricePacks=10:price_…,100:price_…,300:price_…,700:price_…,1000:price_…,1500:price_…
  stripePackPriceIds: Object.fromEntries(
    (context('stripePricePacks') ?? '')
      .split(',')
      .map((pair) => pair.trim().split(':'))
      .filter(([usd, price]) => usd && price)
      .map(([usd, price]) => [Number(usd), price]),
  ),
  stripeSecretName: context('stripeSecretName'),
  stripeWebhookSecretName: context('stripeWebhookSecretName'),
  stripePortalReturnUrl: context('stripePortalReturnUrl'),
  // -c mailFrom="PDF service <pdf@example.com>" -c mailSmtpSecretName=pdf-service/smtp (secret field smtp_url)
  mail: { from: context('mailFrom'), smtpSecretName: context('mailSmtpSecretName') },
  // -c alarmEmail=ops@example.com: subscribed to the alarm topic (confirm the email AWS sends)
  alarmEmail: context('alarmEmail'),
  // -c cognitoFromEmail=no-reply@example.com [-c cognitoFromName="PDF service"] [-c cognitoSesRegion=eu-west-1]
  // [-c cognitoSesVerifiedDomain=example.com]: Cognito's emails through SES (its own sender allows 50 a day)
  cognitoEmail: context('cognitoFromEmail')
    ? {
        fromEmail: context('cognitoFromEmail')!,
        fromName: context('cognitoFromName'),
        sesRegion: context('cognitoSesRegion'),
        sesVerifiedDomain: context('cognitoSesVerifiedDomain'),
      }
    : undefined,
});
