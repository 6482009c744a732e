import { fillUrlClass } from '../../../../functions/core/render/bands';

describe('fillUrlClass', () => {
  it('fills every element of class url (among others) with the address, escaped, and renames the class so Chromium leaves it', () => {
    expect(fillUrlClass('<span class="url"></span> <div class=\'x url y\' style="a"></div>', 'https://example.com/a?b=1&c=<2>')).toBe(
      '<span class="url-filled">https://example.com/a?b=1&amp;c=&lt;2&gt;</span> <div class="x url-filled y" style="a">https://example.com/a?b=1&amp;c=&lt;2&gt;</div>',
    );
  });

  it('leaves other classes and templates alone, and fills with nothing when there is no address', () => {
    expect(fillUrlClass('<span class="urls my-url url2"></span><span class="pageNumber"></span>', 'https://e.com')).toBe('<span class="urls my-url url2"></span><span class="pageNumber"></span>');
    expect(fillUrlClass('<span class="url"></span>', '')).toBe('<span class="url-filled"></span>');
    expect(fillUrlClass('', 'https://e.com')).toBe('');
  });
});
