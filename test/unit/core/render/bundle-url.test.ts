import { bundlePathOf, bundleUrl } from '../../../../functions/core/render/bundle-url';

describe('bundle URLs', () => {
  it('names bundle paths with spaces and unicode through percent-encoding', () => {
    expect(bundleUrl('my docs/ü.html')).toBe('https://bundle.invalid/my%20docs/%C3%BC.html');
    expect(bundlePathOf('https://bundle.invalid/my%20docs/%C3%BC.html?x=1#top')).toBe('my docs/ü.html');
    expect(bundlePathOf('https://elsewhere.example/a.html')).toBeNull();
    expect(bundlePathOf('https://bundle.invalid/dir/')).toBeNull();
    // A '%' that starts no escape stays itself, as a browser opening the file would read it (`100%.png`), and so
    // does an escape that is not UTF-8; the valid escapes around them are still decoded.
    expect(bundlePathOf('https://bundle.invalid/100%.png')).toBe('100%.png');
    expect(bundlePathOf('https://bundle.invalid/50%25%20off%.png')).toBe('50% off%.png');
    expect(bundlePathOf('https://bundle.invalid/caf%E9%20%C3%A9.png')).toBe('caf%E9 é.png');
    // Four-byte characters decode too.
    expect(bundlePathOf('https://bundle.invalid/%F0%9F%98%80.png')).toBe('😀.png');
  });

  it('escapes what would end a path (#, ?, %) in a file name, so the URL names that file and reads back as it', () => {
    for (const path of ['notes #1.html', 'what?.html', '100%.png', 'a/b c/d.css']) {
      expect(bundlePathOf(bundleUrl(path))).toBe(path);
    }
    expect(bundleUrl('notes #1.html')).toBe('https://bundle.invalid/notes%20%231.html');
  });

  it('names no file for the origin itself, a folder or a string that is no URL', () => {
    expect(bundlePathOf('https://bundle.invalid/')).toBeNull();
    expect(bundlePathOf('https://bundle.invalid//a.png')).toBe('a.png');
    expect(bundlePathOf('not a url')).toBeNull();
  });
});
