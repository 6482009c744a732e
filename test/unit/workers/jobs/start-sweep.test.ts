import { STRANDED_JOB_RECORDERS } from '../../../../functions/workers/jobs/start-sweep';
import { WORKFLOWS } from '../../../../functions/workflows';

describe('the start sweeper', () => {
  it('can end a stranded job of every workflow: each has its failure recorder', () => {
    expect(Object.keys(STRANDED_JOB_RECORDERS).sort()).toEqual(WORKFLOWS.map((w) => w.name).sort());
  });
});
