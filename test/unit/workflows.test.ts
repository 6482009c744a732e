import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BULK_SLOT_LEASE_SECONDS } from '../../functions/core/bulk/limits';
import { PDF_JOB_LEASE_SECONDS } from '../../functions/core/pdfops/background';
import { WORKFLOWS } from '../../functions/workflows';

const timeoutOf = (name: string) => {
  const file = WORKFLOWS.find((w) => w.name === name)!.definition;
  return (JSON.parse(readFileSync(path.resolve(__dirname, '../..', file), 'utf8')) as { TimeoutSeconds: number }).TimeoutSeconds;
};

describe('active-job slots outlast their workflows', () => {
  it.each([
    ['bulk', BULK_SLOT_LEASE_SECONDS],
    ['pdfop', PDF_JOB_LEASE_SECONDS],
  ])('a %s slot is held longer than its state machine may run', (workflow, lease) => {
    expect(timeoutOf(workflow)).toBeGreaterThan(0);
    expect(lease).toBeGreaterThan(timeoutOf(workflow));
  });
});
