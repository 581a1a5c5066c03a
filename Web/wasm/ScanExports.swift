// The web vault's barcode reader: CofferScan, compiled with CofferBarcode's tables for wasm32 by scripts/build-wasm.sh
// (Embedded Swift) into coffer-scan.wasm, which the scan worker loads only when the camera opens or a photo is chosen.
// The worker writes a picture's luminance into memory from `coffer_scan_alloc` (one byte a pixel, row by row), calls
// `coffer_scan`, and reads the answer: one record a symbol (FORMAT.md, "Barcode reader").

import CofferBarcode

/// The answer of the last call, kept until the next one. A worker runs one call at a time, so a global is safe here.
nonisolated(unsafe) private var answer: [UInt8] = []

@_expose(wasm, "coffer_scan_alloc")
@_cdecl("coffer_scan_alloc")
func cofferScanAlloc(_ count: Int32) -> UnsafeMutableRawPointer? {
    UnsafeMutableRawPointer.allocate(byteCount: Int(max(count, 1)), alignment: 16)
}

@_expose(wasm, "coffer_scan_free")
@_cdecl("coffer_scan_free")
func cofferScanFree(_ pointer: UnsafeMutableRawPointer?) {
    pointer?.deallocate()
}

/// Reads the `width` × `height` grey picture at `pixels`; with `firstOnly` (a camera frame) it stops at the first
/// symbol read. Returns the number of records in the answer, or -1 when the size is not a picture's.
///
/// Each record is a kind byte, then the symbology's name (a length byte and its ASCII, as the vault stores it):
/// kind 0, a symbol read, is followed by its payload (a 4-byte little-endian length and the bytes); kind 1, a symbol
/// decoded but refused because it is one part of several, by its part and the number of parts (2 bytes each,
/// little-endian; 0 parts when the symbol does not say).
@_expose(wasm, "coffer_scan")
@_cdecl("coffer_scan")
func cofferScan(_ pixels: UnsafePointer<UInt8>, _ width: Int32, _ height: Int32, _ firstOnly: Int32) -> Int32 {
    answer = []
    guard width > 0, height > 0, Int(width) * Int(height) <= 40_000_000,
        let image = GrayImage(width: Int(width), height: Int(height),
                              pixels: Array(UnsafeBufferPointer(start: pixels, count: Int(width) * Int(height))))
    else { return -1 }
    let result = BarcodeReader.scan(image, firstOnly: firstOnly != 0)
    for found in result.found {
        answer.append(0)
        appendName(found.symbology)
        let count = UInt32(found.payload.count)
        for shift in stride(from: 0, to: 32, by: 8) { answer.append(UInt8(truncatingIfNeeded: count >> UInt32(shift))) }
        answer += found.payload
    }
    for refusal in result.refused {
        switch refusal {
        case .structuredAppend(let symbology, let index, let total):
            answer.append(1)
            appendName(symbology)
            for value in [index, total ?? 0] {
                let clamped = UInt16(clamping: value)
                answer += [UInt8(truncatingIfNeeded: clamped), UInt8(truncatingIfNeeded: clamped >> 8)]
            }
        }
    }
    return Int32(result.found.count + result.refused.count)
}

private func appendName(_ symbology: Symbology) {
    let name = Array(symbology.rawValue.utf8)
    answer.append(UInt8(name.count))
    answer += name
}

@_expose(wasm, "coffer_scan_answer")
@_cdecl("coffer_scan_answer")
func cofferScanAnswer() -> UnsafePointer<UInt8>? {
    answer.withUnsafeBufferPointer { $0.baseAddress }
}

@_expose(wasm, "coffer_scan_answer_count")
@_cdecl("coffer_scan_answer_count")
func cofferScanAnswerCount() -> Int32 { Int32(answer.count) }
