export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** DNS, as a port so tests can answer with private, mixed or failing results. */
export interface Resolver {
  resolve(hostname: string): Promise<ResolvedAddress[]>;
}
