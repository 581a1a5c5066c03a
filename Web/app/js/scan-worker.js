// The scan worker: reads camera frames and photos off the page's thread with Coffer's barcode reader (coffer-scan.wasm,
// loaded when the worker starts, which is when the camera opens or a photo is chosen). A message is `{ bitmap,
// firstOnly, id }` (an ImageBitmap, transferred); the answer is `{ id, found, refused, ms }` (see scan.js) or
// `{ id, error }`.
import { loadReader, luminance, scanPixels } from './scan.js';

const reader = loadReader(fetch(new URL('../coffer-scan.wasm', import.meta.url)));
let canvas = null;

self.addEventListener('message', async ({ data: { id, bitmap, firstOnly } }) => {
  try {
    const exports = await reader;
    const { width, height } = bitmap;
    if (!canvas || canvas.width !== width || canvas.height !== height) canvas = new OffscreenCanvas(width, height);
    const context = canvas.getContext('2d', { willReadFrequently: true });
    // Transparent pixels read as the white they would be printed on.
    context.fillStyle = '#fff';
    context.fillRect(0, 0, width, height);
    context.drawImage(bitmap, 0, 0);
    bitmap.close();
    const grey = luminance(context.getImageData(0, 0, width, height).data);
    const started = performance.now();
    const { found, refused } = scanPixels(exports, grey, width, height, firstOnly);
    self.postMessage({ id, found, refused, ms: performance.now() - started });
  } catch (error) {
    bitmap?.close();
    self.postMessage({ id, error: error?.message ?? 'the barcode reader failed' });
  }
});
