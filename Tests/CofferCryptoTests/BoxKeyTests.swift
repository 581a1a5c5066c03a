import CofferPlatform
import CofferTestSupport
import Crypto
import Foundation
import Synchronization
import Testing

@testable import CofferCrypto

@Suite("Prepared box keys")
struct BoxKeyTests {
    private let aad = KeySchedule.itemAssociatedData(
        vaultID: SystemRandom().bytes(16), itemID: SystemRandom().bytes(16), kind: "token", revision: 3, updatedAt: 1_790_000_000_000,
        formatVersion: 1)

    @Test("A prepared key and a key used once open each other's boxes, and every box has its own nonce")
    func bothFormsAgree() throws {
        let key = SymmetricKey(size: .bits256)
        let prepared = try BoxKey(key)
        var nonces = Set<Data>()
        for size in [0, 1, 15, 16, 17, 1024, 70_000] {
            let plaintext = Data(SystemRandom().bytes(size))
            let ours = try Box.seal(plaintext, key: prepared, associatedData: aad)
            #expect(ours.count == size + Box.overhead)
            #expect(try Box.open(ours, key: key, associatedData: aad) == plaintext)
            let once = try Box.seal(plaintext, key: key, associatedData: aad)
            #expect(try Box.open(once, key: prepared, associatedData: aad) == plaintext)
            nonces.insert(ours.prefix(Box.nonceSize))
            nonces.insert(once.prefix(Box.nonceSize))
        }
        #expect(nonces.count == 14)
        // The box is swift-crypto's AES-GCM, byte for byte.
        let sealed = try Box.seal(Data("note".utf8), key: prepared, associatedData: aad)
        let theirs = try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: key, authenticating: aad)
        #expect(theirs == Data("note".utf8))
    }

    @Test("One prepared key seals and opens on many threads at once")
    func concurrentUse() throws {
        let key = SymmetricKey(size: .bits256)
        let prepared = try BoxKey(key)
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            for round in 0..<20 {
                let plaintext = Data(repeating: UInt8(truncatingIfNeeded: index &* 31 &+ round), count: 100 + index)
                do {
                    let box = try Box.seal(plaintext, key: prepared, associatedData: aad)
                    if try Box.open(box, key: prepared, associatedData: aad) != plaintext { failures.add(1, ordering: .relaxed) }
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
    }

    @Test("A wrong key, a changed box or a changed AAD opens nothing; a box shorter than nonce and tag is malformed")
    func refusals() throws {
        let prepared = try BoxKey(SymmetricKey(size: .bits256))
        let box = try Box.seal(Data("secret".utf8), key: prepared, associatedData: aad)
        #expect(throws: CofferCryptoError.authenticationFailed) {
            _ = try Box.open(box, key: try BoxKey(SymmetricKey(size: .bits256)), associatedData: aad)
        }
        for index in [0, Box.nonceSize, box.count - 1] {
            var changed = box
            changed[index] ^= 0x01
            #expect(throws: CofferCryptoError.authenticationFailed) { _ = try Box.open(changed, key: prepared, associatedData: aad) }
        }
        #expect(throws: CofferCryptoError.authenticationFailed) { _ = try Box.open(box, key: prepared, associatedData: aad + [0]) }
        let short = Data(count: Box.overhead - 1)
        #expect(throws: CofferCryptoError.malformedBox) { _ = try Box.open(short, key: prepared, associatedData: aad) }
        #expect(throws: CofferCryptoError.malformedBox) { _ = try Box.open(short, key: SymmetricKey(size: .bits256), associatedData: aad) }
    }

    @Test("Only 256-bit keys are prepared", arguments: [SymmetricKeySize.bits128, .bits192])
    func otherKeySizes(_ size: SymmetricKeySize) {
        #expect(throws: CofferCryptoError.primitiveFailure("AES-GCM key size")) { _ = try BoxKey(SymmetricKey(size: size)) }
        #expect(throws: CofferCryptoError.primitiveFailure("AES-GCM key size")) {
            _ = try Box.seal(Data(), key: SymmetricKey(size: size), associatedData: [])
        }
    }

    @Test("The system's random source fills buffers of any length, past getentropy's 256 bytes a call", arguments: [0, 1, 12, 256, 257, 1000])
    func entropy(_ count: Int) {
        var first = [UInt8](repeating: 0, count: count)
        var second = [UInt8](repeating: 0, count: count)
        first.withUnsafeMutableBytes { SystemEntropy.fill($0) }
        second.withUnsafeMutableBytes { SystemEntropy.fill($0) }
        if count >= 12 {
            #expect(first != second)
            // Every 256-byte call wrote: no 32-byte run stayed zero.
            for start in stride(from: 0, to: count - 32, by: 32) { #expect(first[start..<(start + 32)].contains { $0 != 0 }) }
        }
    }
}
