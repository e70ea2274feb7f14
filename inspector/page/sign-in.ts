/**
 * The operator key: asked for by a sign-in form (the only thing a page without it shows), checked with
 * `GET /v1/machines`, kept in sessionStorage for the tab's life. It is never rendered, logged or put in
 * a URL.
 */
import type { MachineGraphs } from '../../protocol/inspector-api.js';
import { Api, ApiError } from './api.js';
import { fill, h } from './dom.js';

const STORAGE_KEY = 'sdk-operator-key';

/** The key this tab signed in with, if any. */
export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

/** Keeps the key for the tab's life. */
export function storeKey(key: string): void {
  sessionStorage.setItem(STORAGE_KEY, key);
}

/** Forgets the key. */
export function forgetKey(): void {
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // nothing kept
  }
}

/** Checks a key: the machine graphs when the control plane accepts it. */
export async function checkKey(key: string): Promise<MachineGraphs> {
  return new Api(key, () => undefined).json<MachineGraphs>('/v1/machines');
}

/**
 * Replaces the page with the sign-in form; `onSignedIn` runs with the accepted key and the machine
 * graphs it fetched. `message` says why the page asks (a refused key, a signed-out session).
 */
export function showSignIn(
  root: HTMLElement,
  message: string | null,
  onSignedIn: (key: string, machines: MachineGraphs) => void,
): void {
  const input = h('input', {
    type: 'password',
    name: 'operator-key',
    id: 'operator-key',
    autocomplete: 'current-password',
    required: true,
    spellcheck: 'false',
  });
  const note = h('p', { class: 'signin-message', role: 'alert' }, message ?? '');
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h(
    'form',
    { class: 'signin', 'data-testid': 'signin', novalidate: true },
    h('h1', {}, 'sdk inspector'),
    h('p', { class: 'muted' }, 'Sign in with the control plane’s operator key (SDK_API_KEY).'),
    h('label', { for: 'operator-key' }, 'Operator key'),
    input,
    submit,
    note,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (key === '') {
      note.textContent = 'Enter the operator key.';
      return;
    }
    submit.disabled = true;
    note.textContent = 'Checking…';
    checkKey(key).then(
      (machines) => {
        input.value = '';
        storeKey(key);
        onSignedIn(key, machines);
      },
      (error: unknown) => {
        submit.disabled = false;
        note.textContent =
          error instanceof ApiError && error.status === 401
            ? 'The control plane refused this key.'
            : `Could not reach the control plane: ${error instanceof Error ? error.message : 'unknown error'}`;
      },
    );
  });
  document.body.dataset.view = 'signin';
  fill(root, h('main', { class: 'signin-page' }, form));
  input.focus();
}
