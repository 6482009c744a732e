import { launchBaselineBrowser } from '../bench/lib';
(async () => {
  const browser = await launchBaselineBrowser();
  const root = await browser.target().createCDPSession();
  const conn = root.connection()!;
  conn.on('Target.targetCreated', (e: any) => console.log('created', e.targetInfo.type, e.targetInfo.browserContextId?.slice(0, 6), e.targetInfo.url.slice(0, 30)));
  conn.on('Target.attachedToTarget', (e: any) => console.log('attached(root-ish)', e.targetInfo.type));
  await root.send('Target.setDiscoverTargets', { discover: true });
  const { browserContextId } = await root.send('Target.createBrowserContext', { disposeOnDetach: true });
  const { targetId } = await root.send('Target.createTarget', { url: 'about:blank', browserContextId });
  const { sessionId } = await root.send('Target.attachToTarget', { targetId, flatten: true });
  const session = conn.session(sessionId)!;
  await session.send('Page.enable');
  const html = `<p>x</p><script>for (let i = 0; i < 3; i++) new Worker(URL.createObjectURL(new Blob(['postMessage(1)'])));</script>`;
  await session.send('Page.setDocumentContent', { frameId: targetId, html });
  await new Promise((r) => setTimeout(r, 1000));
  await browser.close();
})();
