/** The documents the benchmarks convert. */

export const ONE_PAGE_HTML = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Invoice 1042</title>
<style>body{font-family:sans-serif;margin:40px}table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:6px}h1{color:#234}</style></head>
<body><h1>Invoice 1042</h1><p>Billed to: Example GmbH, Hauptstraße 1, Berlin</p>
<table><tr><th>Item</th><th>Qty</th><th>Price</th></tr>
${Array.from({ length: 8 }, (_, i) => `<tr><td>Service line ${i + 1}</td><td>${i + 1}</td><td>${(i + 1) * 12.5} EUR</td></tr>`).join('')}
</table><p>Total due within 30 days.</p></body></html>`;

/** About ten A4 pages of Markdown with headings, lists, tables and code. */
export function tenPageMarkdown(): string {
  const section = (n: number) => `
## Section ${n}

${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. Sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. '.repeat(5)}

- First point of section ${n}
- Second point with **bold** and \`code\`
- Third point with a [link](https://example.com/${n})

| Metric | Q1 | Q2 | Q3 | Q4 |
|---|---|---|---|---|
| Revenue | 10 | 12 | 14 | 16 |
| Cost | 7 | 8 | 9 | 10 |

\`\`\`ts
export function section${n}(input: number): number {
  return input * ${n};
}
\`\`\`
`;
  return `---\ntitle: Benchmark report\n---\n# Benchmark report\n${Array.from({ length: 16 }, (_, i) => section(i + 1)).join('\n')}`;
}
