// @ts-check
// The app shell, kept so the app opens with no network (FORMAT.md §8.9). Each version of the shell is one cache; the
// server writes the version below (a digest of the shell's files) when it serves this script, so any change to the app
// makes a new worker. A new worker installs beside the old one and waits: it takes over when every tab of the app has
// closed, or when the user asks for it (the page's Reload), never in the middle of a session. Responses are returned
// as they were cached, headers and all, so the Content-Security-Policy stays on every page served offline.
const VERSION = 'coffer-shell-%COFFER_SHELL_VERSION%';

/** Every file of the app, relative to this script (index.html is also the folder's own address). The barcode reader
 * (coffer-scan.wasm, its worker) is kept too, so a card can be scanned in offline; the page itself loads it only when
 * the camera opens or a photo is chosen. */
const SHELL = [
  './', 'index.html', 'app.css', 'manifest.webmanifest', 'icon.svg', 'icon-192.png', 'icon-512.png',
  'icon-maskable.png', 'coffer-barcode.wasm', 'coffer-scan.wasm', 'js/app.js', 'js/autolock.js', 'js/barcode.js',
  'js/bytes.js', 'js/content.js', 'js/crypto.js', 'js/device.js', 'js/editor.js', 'js/format.js', 'js/keys.js',
  'js/otp.js', 'js/otpauth.js', 'js/passkey.js', 'js/places.js', 'js/scan.js', 'js/scan-worker.js', 'js/session.js',
  'js/settings.js', 'js/store.js', 'js/sync.js', 'js/verify.js',
];

/** This service worker's own scope (the libs type `self` as a window's or any worker's). */
const worker = /** @type {ServiceWorkerGlobalScope} */ (/** @type {unknown} */ (self));
const scope = new URL('./', worker.location.href);

worker.addEventListener('install', (event) => {
  // `reload`: the files of this version, from the server, not from the HTTP cache of an older one.
  event.waitUntil(caches.open(VERSION).then((cache) => cache.addAll(SHELL.map((path) => new Request(new URL(path, scope), { cache: 'reload' })))));
});

worker.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) if (name !== VERSION) await caches.delete(name);
    await worker.clients.claim();
  })());
});

worker.addEventListener('message', (event) => {
  if (event.data === 'take-over') worker.skipWaiting();
});

worker.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  // The sync API and anything else outside the app go to the network untouched.
  if (event.request.method !== 'GET' || url.origin !== scope.origin || !url.pathname.startsWith(scope.pathname)) return;
  event.respondWith((async () => {
    const cache = await caches.open(VERSION);
    return (await cache.match(event.request, { ignoreSearch: true })) ?? fetch(event.request);
  })());
});
