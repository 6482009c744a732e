import { lookup } from 'node:dns/promises';
import type { ResolvedAddress, Resolver } from '../../core/net/ports';

/** The system resolver: every address the name has, in the resolver's order. */
export const systemResolver: Resolver = {
  async resolve(hostname: string): Promise<ResolvedAddress[]> {
    const answers = await lookup(hostname, { all: true, verbatim: true });
    return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  },
};
