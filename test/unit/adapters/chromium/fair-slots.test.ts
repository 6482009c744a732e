import { FairSlots } from '../../../../functions/adapters/chromium/fair-slots';

/** Records the order in which acquisitions are granted. */
function recorder(slots: FairSlots) {
  const granted: string[] = [];
  const releases = new Map<string, () => void>();
  const ask = (name: string, tenant: string, resume = false) =>
    slots.acquire(tenant, resume).then((release) => {
      granted.push(name);
      releases.set(name, release);
    });
  const release = async (name: string) => {
    releases.get(name)!();
    await flush();
  };
  return { granted, ask, release };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('FairSlots', () => {
  it('gives a single tenant exactly its capacity at once, then first come first served', async () => {
    const slots = new FairSlots(3);
    const { granted, ask, release } = recorder(slots);
    for (const name of ['a1', 'a2', 'a3', 'a4', 'a5']) void ask(name, 'a');
    await flush();
    expect(granted).toEqual(['a1', 'a2', 'a3']);
    await release('a2');
    expect(granted).toEqual(['a1', 'a2', 'a3', 'a4']);
    expect(slots.load).toEqual({ active: 3, waiting: 1 });
  });

  it('lets a tenant printing nothing start at once on the reserve slot while another holds every slot', async () => {
    const slots = new FairSlots(3);
    const { granted, ask } = recorder(slots);
    for (const name of ['h1', 'h2', 'h3', 'h4', 'h5', 'h6']) void ask(name, 'hostile');
    await flush();
    void ask('v1', 'victim');
    await flush();
    expect(granted).toEqual(['h1', 'h2', 'h3', 'v1']);
    // The reserve is one slot: a second document of the same newcomer waits for a free one.
    void ask('v2', 'victim');
    await flush();
    expect(granted).toHaveLength(4);
  });

  it('starts nobody until printing drops below capacity again, and gives a tie to the earlier waiter', async () => {
    const slots = new FairSlots(3);
    const { granted, ask, release } = recorder(slots);
    for (const name of ['h1', 'h2', 'h3', 'h4', 'h5']) void ask(name, 'hostile');
    await flush();
    void ask('v1', 'victim');
    void ask('v2', 'victim');
    await flush();
    expect(granted).toEqual(['h1', 'h2', 'h3', 'v1']);
    await release('h1'); // 4 → 3 printing: still full
    expect(granted).toHaveLength(4);
    await release('h2'); // hostile 1, victim 1: a tie goes to the earlier waiter
    expect(granted).toEqual(['h1', 'h2', 'h3', 'v1', 'h4']);
    await release('h3'); // hostile 1, victim 1 again: h5 came before v2
    expect(granted.at(-1)).toBe('h5');
    await release('h4'); // hostile 1 (h5) against victim 1 (v1): only v2 waits
    expect(granted.at(-1)).toBe('v2');
  });

  it('hands a freed slot to the tenant printing fewer, even when it asked later', async () => {
    const slots = new FairSlots(3);
    const { granted, ask, release } = recorder(slots);
    for (const [name, tenant] of [['a1', 'a'], ['a2', 'a'], ['b1', 'b']]) void ask(name, tenant);
    await flush();
    void ask('a3', 'a'); // first in line: a prints 2
    void ask('b2', 'b'); // b prints 1, so no reserve slot either
    await flush();
    expect(granted).toEqual(['a1', 'a2', 'b1']);
    await release('b1'); // a prints 2, b prints 0: b2 goes first although a3 asked before it
    expect(granted).toEqual(['a1', 'a2', 'b1', 'b2']);
    await release('a1');
    expect(granted.at(-1)).toBe('a3');
  });

  it('puts a page resuming after an idle wait ahead of documents not yet started', async () => {
    const slots = new FairSlots(1);
    const { granted, ask, release } = recorder(slots);
    await ask('a1', 'a');
    void ask('a2', 'a');
    void ask('a1-again', 'a', true);
    await flush();
    await release('a1');
    expect(granted).toEqual(['a1', 'a1-again']);
  });

  it('gives a slot back only once however often release is called', async () => {
    const slots = new FairSlots(1);
    const first = await slots.acquire('a');
    first();
    first();
    expect(slots.load).toEqual({ active: 0, waiting: 0 });
    await slots.acquire('a');
    expect(slots.load.active).toBe(1);
  });
});
