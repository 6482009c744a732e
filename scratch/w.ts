import { launchBaselineBrowser } from '../bench/lib';
(async () => {
  const browser = await launchBaselineBrowser();
  const root = await browser.target().createCDPSession();
  const conn = root.connection()!;
  const { browserContextId } = await root.send('Target.createBrowserContext', { disposeOnDetach: true });
  const { targetId } = await root.send('Target.createTarget', { url: 'about:blank', browserContextId });
  const { sessionId } = await root.send('Target.attachToTarget', { targetId, flatten: true });
  const session = conn.session(sessionId)!;
  const attach = (s: any, depth: string) => {
    s.on('Target.attachedToTarget', (e: any) => {
      console.log(depth, 'attached', e.targetInfo.type, e.targetInfo.url.slice(0, 40), e.waitingForDebugger);
      const child = conn.session(e.sessionId)!;
      attach(child, depth + '  ');
      child.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }).then(() => console.log(depth, 'child autoattach ok'), (err: any) => console.log(depth, 'child autoattach failed', err.message))
        .finally(() => child.send('Runtime.runIfWaitingForDebugger').catch((err: any) => console.log('run failed', err.message)));
    });
    s.on('Target.detachedFromTarget', (e: any) => console.log(depth, 'detached', e.sessionId.slice(0, 8)));
  };
  attach(session, '');
  await session.send('Page.enable');
  await session.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true });
  const html = `<html><body><p id=o>start</p><iframe src="data:text/html,<script>new Worker(URL.createObjectURL(new Blob(['1'])))</script>"></iframe><script>
    const src = "onmessage = e => { const n = new Worker(URL.createObjectURL(new Blob(['postMessage(42)']))); n.onmessage = m => postMessage('nested ' + m.data); }";
    const w = new Worker(URL.createObjectURL(new Blob([src])));
    w.onmessage = e => { document.getElementById('o').textContent = e.data; };
    w.postMessage(1);
    try { new SharedWorker(URL.createObjectURL(new Blob(['onconnect=()=>{}']))); } catch (e) { console.log(e) }
  </script></body></html>`;
  await session.send('Page.setDocumentContent', { frameId: targetId, html });
  await new Promise((r) => setTimeout(r, 1000));
  const r = await session.send('Runtime.evaluate', { expression: "document.getElementById('o').textContent", returnByValue: true });
  console.log('text', r.result.value);
  await browser.close();
})();
