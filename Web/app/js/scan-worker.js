// @ts-check
// The scan worker: reads camera frames and photos off the page's thread with Coffer's barcode reader (coffer-scan.wasm,
// loaded when the worker starts, which is when the camera opens or a photo is chosen). A message is `{ bitmap,
// firstOnly, id }` (an ImageBitmap, transferred); the answer is `{ id, found, refused, ms }` (see scan.js) or
// `{ id, error }`.
import { loadReader, luminance, scanPixels } from './scan.js';

/** This worker's own scope (the libs type `self` as a window's or any worker's). */
const worker = /** @type {DedicatedWorkerGlobalScope} */ (/** @type {unknown} */ (self));
const reader = loadReader(fetch(new URL('../coffer-scan.wasm', import.meta.url)));
/** @type {OffscreenCanvas | null} */
let canvas = null;

/** @typedef {{ id: number, bitmap: ImageBitmap, firstOnly: boolean }} Picture what the page sends (scan.js) */

worker.addEventListener('message', async (/** @type {MessageEvent<Picture>} */ { data: { id, bitmap, firstOnly } }) => {
  try {
    const exports = await reader;
    const { width, height } = bitmap;
    if (!canvas || canvas.width !== width || canvas.height !== height) canvas = new OffscreenCanvas(width, height);
    // A canvas of this worker's own, only ever drawn in 2D.
    const context = /** @type {OffscreenCanvasRenderingContext2D} */ (canvas.getContext('2d', { willReadFrequently: true }));
    // Transparent pixels read as the white they would be printed on.
    context.fillStyle = '#fff';
    context.fillRect(0, 0, width, height);
    context.drawImage(bitmap, 0, 0);
    bitmap.close();
    const grey = luminance(context.getImageData(0, 0, width, height).data);
    const started = performance.now();
    const { found, refused } = scanPixels(exports, grey, width, height, firstOnly);
    worker.postMessage({ id, found, refused, ms: performance.now() - started });
  } catch (/** @type {any} */ error) {
    bitmap?.close();
    worker.postMessage({ id, error: error?.message ?? 'the barcode reader failed' });
  }
});
