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

  it('reads the class attribute as HTML does: unquoted, in any case, the first one counting (Chromium printed about:blank for these)', () => {
    expect(fillUrlClass('<span class=url></span><b CLASS="url"></b><i Class=\'x url\' id=a></i>', 'https://e.com/?a&b')).toBe(
      '<span class="url-filled">https://e.com/?a&amp;b</span><b CLASS="url-filled">https://e.com/?a&amp;b</b><i Class="x url-filled" id=a>https://e.com/?a&amp;b</i>',
    );
    expect(fillUrlClass('<span class=url />', '')).toBe('<span class="url-filled" />');
    // Not the class attribute: another attribute's name or value, or a second class attribute.
    expect(fillUrlClass('<span data-class="url" title="class=url"></span><p class="a" class="url"></p>', 'https://e.com')).toBe(
      '<span data-class="url" title="class=url"></span><p class="a" class="url"></p>',
    );
  });

  it('takes linear time on templates of many attributes without a closing bracket', () => {
    const started = Date.now();
    fillUrlClass(`<a${' class="x"'.repeat(9000)} url`, 'https://e.com');
    fillUrlClass(`<a${' class=x'.repeat(12000)} url`, 'https://e.com');
    expect(Date.now() - started).toBeLessThan(200);
  });
});
