// The web vault's entry into CofferBarcode, compiled with it for wasm32 by scripts/build-wasm.sh (Embedded Swift).
// JavaScript writes a request into memory from `coffer_alloc`, calls `coffer_barcode`, and reads the answer: the
// module grid the native renderers draw (`EncodedBarcode.moduleGrid()`, standard quiet zone included), one byte per
// module, row-major, 1 for dark; or, on a refusal, the error's text.

/// The answer of the last call, kept until the next one. The module runs on the page's one thread and is called one
/// function at a time, so plain globals are safe here.
nonisolated(unsafe) private var answer: [UInt8] = []
nonisolated(unsafe) private var answerWidth: Int32 = 0
nonisolated(unsafe) private var answerHeight: Int32 = 0

@_expose(wasm, "coffer_alloc")
@_cdecl("coffer_alloc")
func cofferAlloc(_ count: Int32) -> UnsafeMutableRawPointer? {
    UnsafeMutableRawPointer.allocate(byteCount: Int(max(count, 1)), alignment: 16)
}

@_expose(wasm, "coffer_free")
@_cdecl("coffer_free")
func cofferFree(_ pointer: UnsafeMutableRawPointer?) {
    pointer?.deallocate()
}

/// Encodes `payload` as the symbology named by `name` (its raw value, as the vault stores it), with the card's
/// charset (`utf8` 1, else ISO-8859-1), as `Card.barcode()` does natively. Returns 0 and the grid, or 1 and the reason.
@_expose(wasm, "coffer_barcode")
@_cdecl("coffer_barcode")
func cofferBarcode(
    _ name: UnsafePointer<UInt8>, _ nameCount: Int32, _ payload: UnsafePointer<UInt8>, _ payloadCount: Int32,
    _ utf8: Int32
) -> Int32 {
    let symbologyName = String(decoding: UnsafeBufferPointer(start: name, count: Int(nameCount)), as: UTF8.self)
    guard let symbology = Symbology(rawValue: symbologyName) else {
        return refuse("unknown symbology")
    }
    var options = BarcodeOptions()
    options.charset = utf8 == 1 ? .utf8 : .iso8859_1
    let bytes = Array(UnsafeBufferPointer(start: payload, count: Int(payloadCount)))
    let encoded: EncodedBarcode
    do {
        encoded = try encode(bytes, as: symbology, options: options)
    } catch {
        return refuse(error.description)
    }
    let grid = encoded.moduleGrid()
    var cells = [UInt8](repeating: 0, count: grid.width * grid.height)
    for y in 0..<grid.height {
        for x in 0..<grid.width where grid[x, y] { cells[y * grid.width + x] = 1 }
    }
    answer = cells
    answerWidth = Int32(grid.width)
    answerHeight = Int32(grid.height)
    return 0
}

/// The digits an EAN or UPC symbol carries for `payload`, check digit included (`Symbology.digitsWithCheckDigit`):
/// 0 and the digits as ASCII, or 1 for another symbology or a payload it refuses.
@_expose(wasm, "coffer_digits")
@_cdecl("coffer_digits")
func cofferDigits(_ name: UnsafePointer<UInt8>, _ nameCount: Int32, _ payload: UnsafePointer<UInt8>, _ payloadCount: Int32)
    -> Int32
{
    let symbologyName = String(decoding: UnsafeBufferPointer(start: name, count: Int(nameCount)), as: UTF8.self)
    let bytes = Array(UnsafeBufferPointer(start: payload, count: Int(payloadCount)))
    guard let symbology = Symbology(rawValue: symbologyName), let digits = symbology.digitsWithCheckDigit(bytes) else {
        return refuse("no digits")
    }
    answer = Array(digits.utf8)
    answerWidth = 0
    answerHeight = 0
    return 0
}

private func refuse(_ reason: String) -> Int32 {
    answer = Array(reason.utf8)
    answerWidth = 0
    answerHeight = 0
    return 1
}

@_expose(wasm, "coffer_answer")
@_cdecl("coffer_answer")
func cofferAnswer() -> UnsafePointer<UInt8>? {
    answer.withUnsafeBufferPointer { $0.baseAddress }
}

@_expose(wasm, "coffer_answer_count")
@_cdecl("coffer_answer_count")
func cofferAnswerCount() -> Int32 { Int32(answer.count) }

@_expose(wasm, "coffer_answer_width")
@_cdecl("coffer_answer_width")
func cofferAnswerWidth() -> Int32 { answerWidth }

@_expose(wasm, "coffer_answer_height")
@_cdecl("coffer_answer_height")
func cofferAnswerHeight() -> Int32 { answerHeight }
