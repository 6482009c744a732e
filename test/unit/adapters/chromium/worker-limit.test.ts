import { WorkerCount } from '../../../../functions/adapters/chromium/worker-limit';

describe('WorkerCount', () => {
  const worker = (targetId: string, browserContextId?: string, type = 'worker') => ({ targetId, type, browserContextId });

  it('reports a context once, when one worker too many is alive; ended workers free their place', () => {
    const count = new WorkerCount(2);
    const exceeded = jest.fn();
    count.watch('ctx', exceeded);
    count.created(worker('w1', 'ctx'));
    count.created(worker('w2', 'ctx'));
    count.destroyed('w1');
    count.created(worker('w3', 'ctx'));
    expect(exceeded).not.toHaveBeenCalled();
    count.created(worker('w4', 'ctx', 'shared_worker'));
    count.created(worker('w5', 'ctx', 'service_worker'));
    expect(exceeded).toHaveBeenCalledTimes(1);
  });

  it('counts only workers of watched contexts, each context on its own', () => {
    const count = new WorkerCount(1);
    const a = jest.fn();
    const b = jest.fn();
    count.watch('a', a);
    count.watch('b', b);
    count.created(worker('p1', 'a', 'page'));
    count.created(worker('f1', 'a', 'iframe'));
    count.created(worker('w1', 'a'));
    count.created(worker('w2', 'b'));
    count.created(worker('w3', undefined));
    count.created(worker('w4', 'unwatched'));
    expect(a).not.toHaveBeenCalled();
    expect(b).not.toHaveBeenCalled();
    count.forget('a');
    count.created(worker('w5', 'a'));
    count.destroyed('w1');
    expect(a).not.toHaveBeenCalled();
    count.created(worker('w6', 'b'));
    expect(b).toHaveBeenCalledTimes(1);
  });
});
