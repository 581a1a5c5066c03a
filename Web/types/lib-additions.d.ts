// Browser APIs the app uses that TypeScript 4.8's lib.dom and lib.webworker (Debian 12's node-typescript) do not
// describe, or describe too narrowly; written here from the specifications, only as far as the app uses them. The
// type checks read this file (Web/tsconfig.json, Web/tsconfig.worker.json); the browser never does. A later TypeScript
// has most of these in its own lib, and a declaration here then collides with its own: delete it here then.

// Screen Wake Lock (https://w3c.github.io/screen-wake-lock/): the barcode screen stays on at the till (app.js). Optional,
// as a browser without it dims the screen as usual.
interface WakeLockSentinel extends EventTarget {
  readonly released: boolean;
  readonly type: 'screen';
  release(): Promise<void>;
}

interface WakeLock {
  request(type?: 'screen'): Promise<WakeLockSentinel>;
}

interface Navigator {
  readonly wakeLock?: WakeLock;
}

// WebAuthn's PRF extension (https://w3c.github.io/webauthn/#prf-extension): a passkey's PRF output wraps the vault's
// key (passkey.js). Outputs are ArrayBuffers.
interface AuthenticationExtensionsPRFValues {
  first: BufferSource;
  second?: BufferSource;
}

interface AuthenticationExtensionsPRFInputs {
  eval?: AuthenticationExtensionsPRFValues;
  evalByCredential?: Record<string, AuthenticationExtensionsPRFValues>;
}

interface AuthenticationExtensionsPRFOutputs {
  enabled?: boolean;
  results?: { first: ArrayBuffer; second?: ArrayBuffer };
}

interface AuthenticationExtensionsClientInputs {
  prf?: AuthenticationExtensionsPRFInputs;
}

interface AuthenticationExtensionsClientOutputs {
  prf?: AuthenticationExtensionsPRFOutputs;
}

// clearTimeout(null) and clearInterval(null) clear nothing (HTML: the handle converts to 0); the app clears timers it
// may not have set yet. TypeScript 4.8 takes only a number or undefined.
declare function clearTimeout(id: number | null | undefined): void;
declare function clearInterval(id: number | null | undefined): void;

// OffscreenCanvas (HTML), where the scan worker draws each picture to read its pixels (scan-worker.js): TypeScript 4.8
// has only an empty interface in lib.webworker, and nothing in lib.dom. Only what the app uses.
interface OffscreenCanvasRenderingContext2D {
  fillStyle: string | CanvasGradient | CanvasPattern;
  fillRect(x: number, y: number, w: number, h: number): void;
  drawImage(image: ImageBitmap, dx: number, dy: number): void;
  getImageData(sx: number, sy: number, sw: number, sh: number): ImageData;
}

interface OffscreenCanvas extends EventTarget {
  width: number;
  height: number;
  getContext(contextId: '2d', options?: { willReadFrequently?: boolean }): OffscreenCanvasRenderingContext2D | null;
}

declare var OffscreenCanvas: {
  prototype: OffscreenCanvas;
  new (width: number, height: number): OffscreenCanvas;
};
