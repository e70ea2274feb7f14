/**
 * The inspector page: a sign-in until the operator key is accepted, then the shell (title, live
 * indicator, status line, sign out) around the view the hash names, fed by one page-wide subscription
 * to the inspection feed.
 */
import type { MachineGraphs } from '../../protocol/inspector-api.js';
import { Api, ApiError } from './api.js';
import { button, fill, h } from './dom.js';
import { executionView } from './execution-view.js';
import { InspectionFeed } from './feed.js';
import { navigate, parseRoute } from './router.js';
import { sandboxTableView } from './sandbox-table.js';
import { sandboxView, type ViewContext } from './sandbox-view.js';
import { SandboxesSource } from './sandboxes.js';
import { checkKey, forgetKey, showSignIn, storedKey } from './sign-in.js';
import { StatusLine } from './status.js';
import type { View } from './view.js';

const root = document.getElementById('app') ?? document.body;

function start(key: string, machines: MachineGraphs): void {
  let stopped = false;
  // This session's own teardown: a late 401 from it never ends a later session.
  const api = new Api(key, () => {
    teardown('The control plane refused the operator key. Sign in again.');
  });
  const feed = new InspectionFeed();
  const source = new SandboxesSource(api, feed);
  const status = new StatusLine();
  const context: ViewContext = { api, feed, source, machines, status };

  const live = h('span', { class: 'live', 'data-testid': 'live', 'data-connected': 'false' }, 'connecting…');
  const stopConnection = feed.onConnection((connected) => {
    live.dataset.connected = String(connected);
    live.textContent = connected ? 'live' : 'reconnecting…';
  });
  const crumbs = h('nav', { class: 'crumbs', 'aria-label': 'where you are' });
  const main = h('main', { class: 'content' });
  const header = h(
    'header',
    { class: 'topbar' },
    h('button', { type: 'button', class: 'brand link' }, 'sdk inspector'),
    crumbs,
    h('span', { class: 'spacer' }),
    live,
    button(
      'Sign out',
      () => {
        teardown('Signed out.');
      },
      { class: 'quiet', 'data-action': 'sign-out' },
    ),
  );
  header.querySelector('.brand')?.addEventListener('click', () => {
    navigate({ view: 'table' });
  });
  document.body.dataset.view = 'app';
  fill(root, header, status.element, main);

  let view: View | null = null;
  let shown: string | null = null;
  const show = (): void => {
    if (stopped) return;
    view?.destroy();
    view = null;
    if (shown !== null && shown !== window.location.hash) status.clear();
    shown = window.location.hash;
    const route = parseRoute(window.location.hash);
    const crumb = (text: string, go: (() => void) | null): HTMLElement => {
      if (go === null) return h('span', { class: 'crumb mono' }, text);
      return button(text, go, { class: 'crumb link mono' });
    };
    switch (route.view) {
      case 'table':
        fill(crumbs, crumb('sandboxes', null));
        view = sandboxTableView(main, context);
        break;
      case 'sandbox':
        fill(
          crumbs,
          crumb('sandboxes', () => {
            navigate({ view: 'table' });
          }),
          '/',
          crumb(route.sandboxId, null),
        );
        view = sandboxView(main, context, route.sandboxId);
        break;
      case 'execution': {
        const { sandboxId } = route;
        fill(
          crumbs,
          crumb('sandboxes', () => {
            navigate({ view: 'table' });
          }),
          '/',
          crumb(sandboxId, () => {
            navigate({ view: 'sandbox', sandboxId });
          }),
          '/',
          crumb(route.executionId, null),
        );
        view = executionView(main, context, sandboxId, route.executionId);
        break;
      }
      case 'not-found':
        fill(
          crumbs,
          crumb('sandboxes', () => {
            navigate({ view: 'table' });
          }),
        );
        fill(
          main,
          h(
            'div',
            { class: 'view' },
            h('h1', {}, 'Nothing here'),
            h('p', { class: 'muted' }, 'This address names no sandbox or execution the page can show.'),
          ),
        );
        break;
    }
    window.scrollTo(0, 0);
  };
  window.addEventListener('hashchange', show);
  feed.start(api);
  show();

  function teardown(message: string | null): void {
    if (stopped) return;
    stopped = true;
    forgetKey();
    window.removeEventListener('hashchange', show);
    view?.destroy();
    stopConnection();
    feed.stop();
    signIn(message);
  }
}

function signIn(message: string | null): void {
  showSignIn(root, message, start);
}

function boot(): void {
  const key = storedKey();
  if (key === null) {
    signIn(null);
    return;
  }
  // Nothing but an empty page until the stored key is checked again.
  checkKey(key).then(
    (machines) => {
      start(key, machines);
    },
    (error: unknown) => {
      forgetKey();
      signIn(
        error instanceof ApiError && error.status === 401
          ? 'The stored operator key was refused. Sign in again.'
          : 'Could not reach the control plane. Sign in again.',
      );
    },
  );
}

boot();
