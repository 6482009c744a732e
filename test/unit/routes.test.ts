import { ROUTES, handlerRef, matchRoute, preflightMethods, preflightRoutePath, routeFor } from '../../functions/routes';

/** Every route named in the two spec documents, with the credential the spec gives it. */
const SPEC_ROUTES: [string, string, 'key_or_token' | 'token' | 'none'][] = [
  ['POST', '/quickjob', 'key_or_token'], ['POST', '/longjob', 'key_or_token'], ['POST', '/bulkjob/upload-url', 'key_or_token'], ['POST', '/bulkjob', 'key_or_token'],
  ['GET', '/jobs/{job_id}', 'key_or_token'], ['GET', '/jobs/{job_id}/files', 'key_or_token'], ['GET', '/jobs/{job_id}/files/{file_index}/download', 'key_or_token'],
  ['GET', '/jobs/{job_id}/download', 'key_or_token'], ['POST', '/jobs/{job_id}/cancel', 'key_or_token'], ['GET', '/jobs', 'token'],
  ['GET', '/jobs/{job_id}/webhooks/history', 'token'], ['GET', '/me', 'key_or_token'], ['GET', '/accounts/me/billing', 'token'],
  ['GET', '/accounts/me/subscription/plans', 'none'], ['GET', '/accounts/me/subscription', 'token'], ['POST', '/accounts/me/subscription/cancel', 'token'],
  ['POST', '/accounts/me/subscription/resume', 'token'], ['POST', '/accounts/me/subscription/change', 'token'], ['POST', '/accounts/me/subscription/portal', 'token'],
  ['POST', '/accounts/me/api-keys', 'token'], ['GET', '/accounts/me/api-keys', 'token'], ['DELETE', '/accounts/me/api-keys/{api_key_id}', 'token'],
  ['GET', '/plans', 'token'], ['GET', '/plans/{plan_id}', 'token'], ['GET', '/accounts/me', 'token'], ['GET', '/accounts/me/credits', 'token'],
  ['POST', '/pdf/merge', 'key_or_token'], ['POST', '/pdf/split', 'key_or_token'], ['POST', '/pdf/inspect', 'key_or_token'], ['POST', '/pdf/upload-url', 'key_or_token'],
  ['POST', '/pdf/jobs', 'key_or_token'], ['POST', '/pdf/edit/preflight', 'key_or_token'], ['POST', '/pdf/edit', 'key_or_token'], ['POST', '/pdf/extract', 'key_or_token'],
  ['POST', '/templates/{template_id}/render', 'key_or_token'], ['GET', '/templates', 'token'], ['GET', '/templates/{template_id}', 'token'], ['POST', '/templates', 'token'],
  ['PUT', '/templates/{template_id}', 'token'], ['DELETE', '/templates/{template_id}', 'token'], ['GET', '/templates/library', 'token'],
  ['GET', '/mailmerge/connections', 'key_or_token'], ['POST', '/mailmerge/campaigns', 'key_or_token'], ['POST', '/mailmerge/uploads', 'key_or_token'],
  ['POST', '/mailmerge/campaigns/{campaign_id}/preview', 'key_or_token'], ['POST', '/mailmerge/campaigns/{campaign_id}/test', 'key_or_token'],
  ['POST', '/mailmerge/campaigns/{campaign_id}/start', 'key_or_token'], ['GET', '/mailmerge/campaigns/{campaign_id}/recipients', 'key_or_token'],
  ['GET', '/mailmerge/campaigns/{campaign_id}/report', 'key_or_token'], ['POST', '/mailmerge/limit-request', 'key_or_token'], ['DELETE', '/mailmerge/campaigns/{campaign_id}', 'key_or_token'],
  ['POST', '/accounts/me/webhooks', 'token'], ['GET', '/accounts/me/webhooks', 'token'], ['GET', '/accounts/me/webhooks/{webhook_id}', 'token'],
  ['PUT', '/accounts/me/webhooks/{webhook_id}', 'token'], ['POST', '/accounts/me/webhooks/{webhook_id}/rotate-secret', 'token'],
  ['DELETE', '/accounts/me/webhooks/{webhook_id}', 'token'], ['GET', '/accounts/me/webhooks/{webhook_id}/history', 'token'],
  ['POST', '/stripe/webhook', 'none'],
];

describe('route table', () => {
  it('holds every route of both spec documents with the spec credential kind', () => {
    for (const [method, path, access] of SPEC_ROUTES) {
      const route = ROUTES.find((r) => r.method === method && r.path === path);
      expect(route ? `${method} ${path} ${route.access}` : `${method} ${path} missing`).toBe(`${method} ${path} ${access}`);
    }
  });

  it('has unique ids and unique method+path pairs', () => {
    expect(new Set(ROUTES.map((r) => r.id)).size).toBe(ROUTES.length);
    expect(new Set(ROUTES.map((r) => `${r.method} ${r.path}`)).size).toBe(ROUTES.length);
  });

  it('points every route at a handler that exists (or the 501 stand-in)', () => {
    for (const route of ROUTES) {
      const [file, name] = handlerRef(route).split('#');
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const mod = require(`../../functions/${file}`);
      expect(typeof mod[name]).toBe('function');
    }
  });

  it('answers 501 on exactly the routes of what is not built (editor, extract, templates, mail merge) and serves every other', () => {
    const notBuilt = /^(pdf\.edit|pdf\.extract|templates\.|mailmerge\.)/;
    expect(ROUTES.filter((r) => r.handler === null).map((r) => r.id).filter((id) => !notBuilt.test(id))).toEqual([]);
    expect(ROUTES.filter((r) => r.handler !== null).map((r) => r.id).filter((id) => notBuilt.test(id))).toEqual([]);
  });

  it('matches literal segments before parameters and decodes parameters', () => {
    expect(matchRoute('GET', '/templates/library')?.route.id).toBe('templates.library');
    expect(matchRoute('GET', '/templates/tpl_1')).toMatchObject({ route: { id: 'templates.get' }, params: { template_id: 'tpl_1' } });
    expect(matchRoute('GET', '/jobs/a%20b/download')?.params.job_id).toBe('a b');
    expect(matchRoute('PATCH', '/jobs/x')).toBeNull();
    expect(matchRoute('GET', '/nope')).toBeNull();
  });

  it('finds the route of a resource path by its method too, as the authorizer asks (one path, several routes)', () => {
    expect(routeFor('GET', '/mailmerge/connections')?.id).toBe('mailmerge.connections.list');
    expect(routeFor('post', '/mailmerge/connections')?.id).toBe('mailmerge.connections.create');
    expect(routeFor('PATCH', '/jobs/{job_id}')).toBeUndefined();
  });

  // Document 2: "PDF tools, editor, extract, template render and mail merge routes accept an API key or an ID token";
  // the sender-connection routes the spec does not list are mail merge routes too.
  it('lets every mail merge route take an API key or an ID token', () => {
    const mailMerge = ROUTES.filter((r) => r.path.startsWith('/mailmerge'));
    expect(mailMerge.length).toBeGreaterThan(10);
    expect(mailMerge.filter((r) => r.access !== 'key_or_token').map((r) => `${r.method} ${r.path}`)).toEqual([]);
  });

  it('forgives a trailing slash but matches no route with an empty segment elsewhere (it was dropped: /jobs//files ran GET /jobs/files)', () => {
    expect(matchRoute('GET', '/me/')?.route.id).toBe(matchRoute('GET', '/me')?.route.id);
    expect(matchRoute('GET', '/jobs//files')).toBeNull();
    expect(matchRoute('GET', '//me')).toBeNull();
    expect(matchRoute('GET', '/')).toBeNull();
  });
});

describe('preflights', () => {
  it('resolve a concrete path to its route path, literal segments first, whatever the method', () => {
    expect(preflightRoutePath('/jobs/job_1')).toBe('/jobs/{job_id}');
    expect(preflightRoutePath('/templates/library')).toBe('/templates/library');
    expect(preflightRoutePath('/nope')).toBeNull();
    expect(preflightRoutePath('/jobs/%ZZ')).toBeNull();
  });

  it('name the methods of that route path', () => {
    expect(preflightMethods('/quickjob')).toEqual(['POST', 'OPTIONS']);
    expect(preflightMethods('/jobs/{job_id}')).toEqual(['GET', 'OPTIONS']);
  });
});
