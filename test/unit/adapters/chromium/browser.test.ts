import { PassThrough } from 'node:stream';
import { launchArgs, watchChromiumLog } from '../../../../functions/adapters/chromium/browser';

describe("Chromium's log", () => {
  it('is written to stderr, errors only', () => {
    expect(launchArgs({ onLambda: true, roomyDevShm: false })).toEqual(expect.arrayContaining(['--enable-logging=stderr', '--log-level=2']));
  });

  it('reports the lines saying a renderer was killed over a bad IPC or Mojo message, and no others', async () => {
    const stderr = new PassThrough();
    const seen: string[] = [];
    watchChromiumLog(stderr, (line) => seen.push(line));
    stderr.write('[1124/034022.404371:ERROR:../../content/browser/bad_message.cc:29] Terminating renderer for bad IPC message, reason 123\n');
    stderr.write('[1124/034022.5:ERROR:../../gpu/command_buffer/service/shared_image.cc:1] something unrelated\n');
    stderr.write('[1124/034023.1:ERROR:../../content/browser/renderer_host/render_process_host_impl.cc:5] Terminating render process for bad Mojo message: Received bad user message: invalid\r\n');
    stderr.end();
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([
      expect.stringMatching(/Terminating renderer for bad IPC message, reason 123$/),
      expect.stringMatching(/Terminating render process for bad Mojo message: Received bad user message: invalid$/),
    ]);
  });
});
