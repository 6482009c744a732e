import { mapRenderError } from '../../../../functions/adapters/chromium/renderer';

describe('mapRenderError', () => {
  it.each([
    'Protocol error (Runtime.evaluate): Inspected target navigated or closed',
    'Protocol error (Page.printToPDF): Execution context was destroyed.',
  ])('makes a document that navigated away a 400 naming the document (%s)', (message) => {
    expect(mapRenderError(new Error(message))).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'html', reason: 'navigated_away' } });
  });

  it('makes page ranges Chromium refuses a 400 naming options.pageRanges', () => {
    expect(mapRenderError(new Error('Protocol error (Page.printToPDF): Page range exceeds page count'))).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'options.pageRanges' } });
  });

  it('leaves other failures alone (a 500 the caller may retry)', () => {
    const crash = new Error('Protocol error (Page.printToPDF): Printing failed');
    expect(mapRenderError(crash)).toBe(crash);
  });
});
