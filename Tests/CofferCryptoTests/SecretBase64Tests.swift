import CofferCrypto
import Foundation
import Testing

/// The wipeable base64 against Foundation's, at every length up to three whole groups and past them, and on its
/// refusals.
@Suite struct SecretBase64Tests {
    @Test func sameAsFoundation() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
            let text = bytes.withUnsafeBytes { SecretBase64.encode($0) }
            #expect(String(decoding: text, as: UTF8.self) == Data(bytes).base64EncodedString())
            #expect(SecretBase64.decode(text) == bytes)
        }
    }

    @Test("text that is not padded base64 is refused", arguments: ["AP+Afw=", "AP+A=w==", "AP*Afw==", "A===", "===="])
    func refused(text: String) {
        #expect(SecretBase64.decode(Array(text.utf8)) == nil)
    }
}
