/**
 * Money is integer micro-USD inside the service (0.01 USD = 10_000). The API shows USD numbers.
 * Floats never touch a balance: conversion happens only at the edges.
 */
export type Micros = number;

export const MICROS_PER_USD = 1_000_000;

export function usdToMicros(usd: number): Micros {
  if (typeof usd !== 'number' || !Number.isFinite(usd)) throw new TypeError(`not a USD amount: ${usd}`);
  return Math.round(usd * MICROS_PER_USD);
}

/** USD number for responses. Integer division by 10^6 is exact for every cent amount. */
export function microsToUsd(micros: Micros): number {
  return micros / MICROS_PER_USD;
}

/**
 * How many whole PDFs `micros` pays for at `pricePerPdf`. A plan an operator priced at 0 has nothing to count by:
 * 0, as a number (dividing gave Infinity or NaN, which JSON writes as null where the spec promises numbers).
 */
export function pdfsCovered(micros: Micros, pricePerPdf: Micros): number {
  return pricePerPdf > 0 ? Math.floor(micros / pricePerPdf) : 0;
}
