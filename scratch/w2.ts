import { launchBaselineBrowser } from '../bench/lib';
(async () => {
  const browser = await launchBaselineBrowser();
  const root = await browser.target().createCDPSession();
  const conn = root.connection()!;
  const { browserContextId } = await root.send('Target.createBrowserContext', { disposeOnDetach: true });
  const { targetId } = await root.send('Target.createTarget', { url: 'about:blank', browserContextId });
  const { sessionId } = await root.send('Target.attachToTarget', { targetId, flatten: true });
  const session = conn.session(sessionId)!;
  let n = 0;
  session.on('Target.attachedToTarget', (e: any) => {
    n++;
    console.log('attached', n, e.targetInfo.type);
    if (n <= 1) conn.session(e.sessionId)!.send('Runtime.runIfWaitingForDebugger');
  });
  await session.send('Page.enable');
  await session.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true });
  const html = `<html><body><p id=o>start</p><p id=s>shared?</p><script>
    const out = []; 
    for (let i = 0; i < 3; i++) { const w = new Worker(URL.createObjectURL(new Blob(['postMessage(' + i + ')']))); w.onmessage = e => { out.push(e.data); document.getElementById('o').textContent = out.join(','); }; }
    try { const sw = new SharedWorker(URL.createObjectURL(new Blob(['onconnect=e=>{e.ports[0].postMessage("sw ran")}']))); sw.port.onmessage = e => document.getElementById('s').textContent = e.data; } catch (e) { document.getElementById('s').textContent = 'sw error ' + e; }
  </script></body></html>`;
  const t = Date.now();
  await session.send('Page.setDocumentContent', { frameId: targetId, html });
  const r0 = await session.send('Runtime.evaluate', { expression: "new Promise(r => document.readyState === 'complete' ? r(1) : addEventListener('load', () => r(2)))", awaitPromise: true, returnByValue: true });
  console.log('loaded', r0.result.value, Date.now() - t, 'ms');
  await new Promise((r) => setTimeout(r, 1000));
  const r = await session.send('Runtime.evaluate', { expression: "document.getElementById('o').textContent + ' | ' + document.getElementById('s').textContent", returnByValue: true });
  console.log('text', r.result.value);
  const targets = await root.send('Target.getTargets');
  console.log(targets.targetInfos.map((t: any) => t.type + ' ' + t.url.slice(0, 30)));
  await browser.close();
})();
