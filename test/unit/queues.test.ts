import { QUEUES, queueDef, retryDelaySeconds } from '../../functions/queues';

describe('queue retry delays', () => {
  it.each(QUEUES.map((q) => [q.name, q] as const))('%s: a wait for every redelivery, each shorter than the visibility timeout', (_name, def) => {
    expect(def.retryDelaysSeconds.length).toBe(def.maxReceiveCount - 1);
    for (const seconds of def.retryDelaysSeconds) {
      expect(seconds).toBeGreaterThan(0);
      expect(seconds).toBeLessThan(def.visibilityTimeoutSeconds);
    }
  });

  it('picks the wait by delivery count, the last one for later deliveries', () => {
    const webhooks = queueDef('webhooks');
    expect([0, 1, 2, 3, 4, 9].map((n) => retryDelaySeconds(webhooks, n))).toEqual([10, 10, 60, 300, 600, 600]);
  });
});
