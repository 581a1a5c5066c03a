// @ts-check
// Coffer's own barcode reader (Sources/CofferScan) compiled to WebAssembly by scripts/build-wasm.sh, and what the page
// and the scan worker need around it: the module's answer parsed, a picture's luminance, and a scanning session that
// feeds camera frames or a chosen photo to the worker. Nothing here runs until the camera opens or a photo is chosen:
// the worker, and the module it loads, are made then.
import { load } from './barcode.js';
import { CofferError } from './bytes.js';

/**
 * The reader's exports (Web/wasm/ScanExports.swift): pointers into `memory`, counts in bytes.
 * @typedef {object} ReaderExports
 * @property {WebAssembly.Memory} memory
 * @property {(count: number) => number} coffer_scan_alloc
 * @property {(pointer: number) => void} coffer_scan_free
 * @property {(pixels: number, width: number, height: number, firstOnly: number) => number} coffer_scan records, or < 0
 * @property {() => number} coffer_scan_answer
 * @property {() => number} coffer_scan_answer_count
 */

/**
 * A symbol read, and one refused (part `index` of `total` of a message spread over several symbols).
 * @typedef {{ symbology: string, payload: Uint8Array }} Read
 * @typedef {{ symbology: string, index: number, total: number | null }} Refusal
 */

/**
 * The worker's answer to picture `id`: what it read and how long the reader took, or why it could not read.
 * @typedef {{ id: number, found?: Read[], refused?: Refusal[], ms?: number, error?: string }} Answer
 */

/**
 * The reader's exports, from `source` (a Response, for streaming, or the module's bytes): instantiated as the encoder
 * is, with the same one import (randomness for Swift's hashing).
 * @type {(source: Uint8Array | ArrayBuffer | Response | PromiseLike<Response>) => Promise<ReaderExports>}
 */
export const loadReader = load;

/**
 * The module's answer (FORMAT.md, "Barcode reader"): `{ found: [{ symbology, payload }], refused: [{ symbology, index,
 * total }] }`, `total` null when the symbol does not say. A malformed answer throws: it would be a bug, not an input.
 * @param {Uint8Array} bytes
 * @param {number} count
 */
export function parseAnswer(bytes, count) {
  /** @type {Read[]} */
  const found = [];
  /** @type {Refusal[]} */
  const refused = [];
  let at = 0;
  /** @param {number} length */
  const need = (length) => {
    if (at + length > bytes.length) throw new CofferError('scan', 'the barcode reader gave a malformed answer');
  };
  for (let record = 0; record < count; record++) {
    need(2);
    const kind = bytes[at];
    const nameLength = bytes[at + 1];
    at += 2;
    need(nameLength);
    const symbology = String.fromCharCode(...bytes.subarray(at, at + nameLength));
    at += nameLength;
    if (kind === 0) {
      need(4);
      const length = (bytes[at] | bytes[at + 1] << 8 | bytes[at + 2] << 16 | bytes[at + 3] << 24) >>> 0;
      at += 4;
      need(length);
      found.push({ symbology, payload: bytes.slice(at, at + length) });
      at += length;
    } else if (kind === 1) {
      need(4);
      const index = bytes[at] | bytes[at + 1] << 8;
      const total = bytes[at + 2] | bytes[at + 3] << 8;
      at += 4;
      refused.push({ symbology, index, total: total === 0 ? null : total });
    } else {
      throw new CofferError('scan', 'the barcode reader gave a malformed answer');
    }
  }
  if (at !== bytes.length) throw new CofferError('scan', 'the barcode reader gave a malformed answer');
  return { found, refused };
}

/**
 * Every symbol in a `width` × `height` grey picture (one byte a pixel); `firstOnly` stops at the first (a frame).
 * @param {ReaderExports} exports
 * @param {Uint8Array} grey
 * @param {number} width
 * @param {number} height
 * @param {boolean} firstOnly
 */
export function scanPixels(exports, grey, width, height, firstOnly) {
  const pointer = exports.coffer_scan_alloc(grey.length);
  try {
    new Uint8Array(exports.memory.buffer, pointer, grey.length).set(grey);
    const count = exports.coffer_scan(pointer, width, height, firstOnly ? 1 : 0);
    if (count < 0) throw new CofferError('scan', 'the picture has no pixels to read');
    const answer = new Uint8Array(exports.memory.buffer, exports.coffer_scan_answer(), exports.coffer_scan_answer_count());
    return parseAnswer(answer.slice(), count);
  } finally {
    exports.coffer_scan_free(pointer);
  }
}

/**
 * The luminance of RGBA pixels over white, weighted as the CLI's PNG decoder weighs them (ITU-R BT.601).
 * @param {ArrayLike<number>} rgba
 */
export function luminance(rgba) {
  const grey = new Uint8Array(rgba.length / 4);
  for (let pixel = 0, at = 0; pixel < grey.length; pixel++, at += 4) {
    const alpha = rgba[at + 3];
    const y = (299 * rgba[at] + 587 * rgba[at + 1] + 114 * rgba[at + 2] + 500) / 1000;
    grey[pixel] = alpha === 255 ? y : (y * alpha + 255 * (255 - alpha) + 127) / 255;
  }
  return grey;
}

/** The longest side a chosen photo is read at: a phone's 12-megapixel photo is shrunk first, as the CLI does. */
export const PHOTO_SIDE = 2048;

/** Time between camera frames sent to the reader (a tenth of a second is fast enough for a hand). */
const FRAME_INTERVAL = 100;

/**
 * The reader's worker, made when the camera first opens or a photo is first chosen, and kept for the next scan: the
 * browser compiles the reader again for a new worker, and its first frames run slower while it does.
 * @type {Worker | null}
 */
let sharedWorker = null;

/** Numbers the pictures sent to the worker, so that an answer meant for an earlier session is not taken for this one's. */
let lastRequest = 0;

/** Ends the reader's worker, and with it every picture and answer in its memory (the app locking). */
export function releaseReader() {
  sharedWorker?.terminate();
  sharedWorker = null;
}

/**
 * A scanning session: the back camera's frames, or one chosen photo, read in a worker. `onRead(reads)` gets the symbols
 * of the first frame (or the photo) that has any, and the camera stops then; `onStatus(text)` says what is happening;
 * `onFrame(ms)`, if given, how long the reader took over each camera frame. `stop()` ends it: the camera's light goes
 * off (the worker stays for the next scan until `releaseReader()`).
 */
export class ScanSession {
  /**
   * @param {object} options
   * @param {(reads: Read[]) => void} options.onRead
   * @param {(text: string) => void} options.onStatus
   * @param {(ms: number) => void} [options.onFrame]
   */
  constructor({ onRead, onStatus, onFrame }) {
    this.onRead = onRead;
    this.onStatus = onStatus;
    this.onFrame = onFrame;
    /** @type {Worker | null} */
    this.worker = null;
    /** @type {MediaStream | null} */
    this.stream = null;
    /** @type {HTMLVideoElement | null} */
    this.video = null;
    /** @type {number | null} */
    this.timer = null;
    /** @type {{ kind: 'frame' | 'photo', sent: number, id: number } | null} */
    this.pending = null;
  }

  /** The shared worker, made on first use (it loads the reader itself), with this session listening to it. */
  reader() {
    if (!this.worker) {
      sharedWorker ??= new Worker(new URL('./scan-worker.js', import.meta.url), { type: 'module' });
      this.worker = sharedWorker;
      /** @param {MessageEvent<Answer>} event */
      this.listener = (event) => this.answered(event.data);
      this.errorListener = () => {
        releaseReader();
        this.failed('the barcode reader could not start');
      };
      this.worker.addEventListener('message', this.listener);
      this.worker.addEventListener('error', this.errorListener);
    }
    return this.worker;
  }

  /**
   * Opens the back camera (any camera where there is no back one) into `video` and reads its frames.
   * @param {HTMLVideoElement} video
   */
  async startCamera(video) {
    this.stopCamera();
    if (!navigator.mediaDevices?.getUserMedia) throw new CofferError('camera', 'this browser has no camera here: choose a photo instead');
    let stream;
    try {
      // `ideal`, never `exact`: a laptop's only camera, or a test's fake one, has no facing mode.
      stream = await navigator.mediaDevices.getUserMedia({ audio: false,
        video: { facingMode: { ideal: 'environment' }, width: { ideal: 1280 }, height: { ideal: 720 } } });
    } catch (/** @type {any} */ error) {
      throw new CofferError('camera', error?.name === 'NotAllowedError'
        ? 'the camera was not allowed: allow it in the browser, or choose a photo instead'
        : 'no camera could be opened: choose a photo instead');
    }
    this.stream = stream;
    this.video = video;
    video.srcObject = stream;
    video.muted = true;
    video.setAttribute('playsinline', '');
    await video.play().catch(() => {});
    this.reader();
    this.onStatus('Point the camera at the barcode.');
    this.nextFrame(0);
  }

  /** @param {number} delay */
  nextFrame(delay) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.sendFrame(), delay);
  }

  async sendFrame() {
    const video = this.video;
    if (!video || !this.stream || this.pending) return;
    if (video.readyState < 2 || !video.videoWidth) {
      this.nextFrame(FRAME_INTERVAL);
      return;
    }
    let bitmap;
    try {
      bitmap = await createImageBitmap(video);
    } catch {
      this.nextFrame(FRAME_INTERVAL);
      return;
    }
    if (!this.stream) {
      bitmap.close();
      return;
    }
    this.pending = { kind: 'frame', sent: performance.now(), id: ++lastRequest };
    this.reader().postMessage({ id: this.pending.id, bitmap, firstOnly: true }, [bitmap]);
  }

  /**
   * Reads every symbol in a photo the user chose (`File` or `Blob`), upright by its EXIF orientation.
   * @param {Blob} file
   */
  async readPhoto(file) {
    this.stopCamera();
    let bitmap;
    try {
      // 'from-image' is the HTML standard's name for the EXIF orientation; TypeScript 4.8's lib knows only 'none'.
      bitmap = await createImageBitmap(file, /** @type {ImageBitmapOptions} */ (/** @type {unknown} */ ({ imageOrientation: 'from-image' })));
    } catch {
      throw new CofferError('photo', 'the file is not a picture this browser can open (PNG, JPEG, WebP)');
    }
    const longest = Math.max(bitmap.width, bitmap.height);
    if (longest > PHOTO_SIDE) {
      const scale = PHOTO_SIDE / longest;
      const smaller = await createImageBitmap(bitmap, { resizeWidth: Math.max(1, Math.round(bitmap.width * scale)),
        resizeHeight: Math.max(1, Math.round(bitmap.height * scale)), resizeQuality: 'high' });
      bitmap.close();
      bitmap = smaller;
    }
    this.onStatus('Reading the photo…');
    this.pending = { kind: 'photo', sent: performance.now(), id: ++lastRequest };
    this.reader().postMessage({ id: this.pending.id, bitmap, firstOnly: false }, [bitmap]);
  }

  /**
   * @param {Answer} answer `found`, `refused` and `ms`, or `error` (scan-worker.js)
   */
  answered({ id, found, refused, error, ms }) {
    const pending = this.pending;
    if (!pending || id !== pending.id) return;
    this.pending = null;
    if (error) {
      this.failed(error);
      return;
    }
    // An answer without an error has what it read (the casts below).
    if (pending.kind === 'frame') this.onFrame?.(/** @type {number} */ (ms));
    if (/** @type {Read[]} */ (found).length) {
      this.stopCamera();
      this.onRead(/** @type {Read[]} */ (found));
      return;
    }
    if (/** @type {Refusal[]} */ (refused).length) {
      const { symbology, index, total } = /** @type {Refusal[]} */ (refused)[0];
      this.onStatus(`This ${symbology} code is part ${index}${total ? ` of ${total}` : ''} of a message spread over several codes: Coffer keeps one code per item.`);
    } else if (pending.kind === 'photo') {
      this.onStatus('No barcode found in the photo: try a sharper one, closer, in even light, with the whole code in it.');
    }
    if (pending.kind === 'frame' && this.stream) this.nextFrame(Math.max(0, FRAME_INTERVAL - (performance.now() - pending.sent)));
  }

  /** @param {string} message */
  failed(message) {
    this.stop();
    this.onStatus(message);
  }

  /** Turns the camera off (its light too); the worker stays for a photo. */
  stopCamera() {
    clearTimeout(this.timer);
    this.timer = null;
    for (const track of this.stream?.getTracks() ?? []) track.stop();
    this.stream = null;
    if (this.video) {
      this.video.pause();
      this.video.srcObject = null;
    }
    this.video = null;
    if (this.pending?.kind === 'frame') this.pending = null;
  }

  /** Ends the session: the camera off, and this session no longer listening to the reader. */
  stop() {
    this.stopCamera();
    this.pending = null;
    // A session with a worker has its listeners (`reader()` set them).
    this.worker?.removeEventListener('message', /** @type {(event: MessageEvent<Answer>) => void} */ (this.listener));
    this.worker?.removeEventListener('error', /** @type {() => void} */ (this.errorListener));
    this.worker = null;
  }
}
