import path from 'node:path';
import { build } from 'esbuild';
import { type FunctionProfile, ROUTES, handlerRef } from '../../functions/routes';
import { QUEUES } from '../../functions/queues';
import { SCHEDULES } from '../../functions/schedules';
import { WORKFLOWS } from '../../functions/workflows';
import { externalModules } from '../../lib/functions';

const ROOT = path.resolve(__dirname, '../..');

/** Every Lambda entry bundles with the settings lib/functions.ts gives NodejsFunction (cdk synth does the same per function). */
describe('Lambda bundles', () => {
  const entries = new Map<string, FunctionProfile>([
    ['http/authorizer#handler', 'light'],
    ['workers/cognito/post-confirmation#handler', 'standard'],
  ]);
  for (const r of ROUTES) entries.set(handlerRef(r), r.handler ? r.profile : 'light');
  for (const w of WORKFLOWS) for (const task of Object.values(w.tasks)) entries.set(task.ref, task.profile);
  for (const q of QUEUES) entries.set(q.handler, q.profile);
  for (const s of SCHEDULES) entries.set(s.handler, s.profile);

  it.each([...entries])('%s bundles for Node 22', async (ref, profile) => {
    const [file, exportName] = ref.split('#');
    const result = await build({
      entryPoints: [path.join(ROOT, 'functions', `${file}.ts`)],
      bundle: true,
      platform: 'node',
      target: 'node22',
      format: 'cjs',
      external: externalModules(profile),
      write: false,
      logLevel: 'silent',
      metafile: true,
    });
    expect(result.errors).toEqual([]);
    const code = result.outputFiles[0].text;
    expect(code).toContain(exportName);
    const inputs = Object.keys(result.metafile!.inputs);
    // Browser code only where it is used.
    expect(inputs.some((i) => i.includes('node_modules/puppeteer-core/'))).toBe(profile === 'render');
  });
});
