import { App, type PolicyViolation, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { PdfServiceStack } from '../../lib/pdf-service-stack';
import { tempDir } from '../support/temp';

/**
 * cdk-nag's AwsSolutions pack over the whole stack: every finding is either fixed in lib/ or acknowledged with a
 * reason in lib/nag-suppressions.ts.
 *
 * cdk-nag v3 is a CDK policy-validation plugin, not an Aspect: it reports through its own report (no Annotations
 * to query) and reads acknowledgments made with `Validations.of(construct).acknowledge`. `validateScope` runs the
 * same checks `Validations.of(app).addPlugins(...)` would run at synth.
 */

// Same setup as stack.test.ts: the structure only (bundling is proven by bundles.test.ts), synthesised once.
const app = new App({ outdir: tempDir('cdk.out-'), context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new PdfServiceStack(app, 'NagTest');
app.synth();
const findings = new AwsSolutionsChecks(app, { verbose: true }).validateScope(stack).violations;

const show = (violations: PolicyViolation[]) =>
  violations.flatMap((v) => [`${v.ruleName} (${v.severity}): ${v.description}`, ...v.violatingResources.map((r) => `    at ${r.constructPath}`)]).join('\n');

describe('cdk-nag AwsSolutions', () => {
  it('reports no unacknowledged errors', () => {
    expect(show(findings.filter((v) => v.severity === 'error'))).toBe('');
  });

  it('reports no unacknowledged warnings', () => {
    expect(show(findings.filter((v) => v.severity !== 'error'))).toBe('');
  });

  it('acknowledges only findings the pack really reports there, each with a reason', () => {
    // The same pack blind to acknowledgments: what it would report without lib/nag-suppressions.ts.
    const proto = AwsSolutionsChecks.prototype as unknown as { isAcknowledged?: unknown };
    expect(typeof proto.isAcknowledged).toBe('function'); // cdk-nag internals this check relies on
    const blind = new AwsSolutionsChecks(app);
    Object.assign(blind, { isAcknowledged: () => false });
    const raw = blind.validateScope(stack).violations;

    const acknowledged = stack.node.findAll().flatMap((c) =>
      c.node.metadata
        .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((m) => Object.entries(m.data as Record<string, string>).map(([id, reason]) => ({ path: c.node.path, id: id.replace(/^annotation::/i, ''), reason }))),
    );
    const nag = acknowledged.filter((a) => a.id.startsWith('AwsSolutions-'));
    expect(nag.length).toBeGreaterThan(0);
    const stale = nag.filter(
      (a) => !raw.some((v) => v.ruleName === a.id && v.violatingResources.some((r) => r.constructPath === a.path || r.constructPath?.startsWith(`${a.path}/`))),
    );
    expect(stale.map((a) => `${a.id} at ${a.path}`)).toEqual([]);
    expect(nag.filter((a) => a.reason.trim().length < 40).map((a) => `${a.id} at ${a.path}: "${a.reason}"`)).toEqual([]);
  });
});
