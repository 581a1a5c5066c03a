import CofferKit
import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Coffer's benchmark program. `swift run -c release coffer-bench vault` measures the vault against the goals in
/// issue #2 and against OpenSSL (Python `cryptography`) on the same machine in the same run.
@main
struct Bench {
    static func main() throws {
        let arguments = CommandLine.arguments.dropFirst()
        switch arguments.first {
        case "vault", nil:
            try VaultBench(itemCount: Int(arguments.dropFirst().first ?? "") ?? 10_000).run()
        default:
            FileHandle.standardError.write(Data("usage: coffer-bench vault [ITEMS]\n".utf8))
            exit(64)
        }
    }
}

/// Times `body` `repetitions` times and returns the fastest run in seconds.
func fastest(_ repetitions: Int, _ body: () throws -> Void) rethrows -> Double {
    var best = Double.infinity
    for _ in 0..<repetitions {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    return best
}

func report(_ label: String, _ value: String) {
    print(label.padding(toLength: 52, withPad: " ", startingAt: 0) + value)
}

func milliseconds(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }

struct VaultBench {
    let itemCount: Int

    func run() throws {
        print("coffer-bench vault (\(itemCount) items), \(ProcessInfo.processInfo.activeProcessorCount) cores")
        try kdf()
        try aead()
        try vault()
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        report("peak RSS", String(format: "%.1f MiB", Double(usage.ru_maxrss) / 1024))
    }

    /// PBKDF2-HMAC-SHA256 at 600,000 iterations against OpenSSL's, same password and salt.
    func kdf() throws {
        let password = "benchmark passphrase"
        let salt = SystemRandom().bytes(32)
        let secret = try Passphrase.bytes(password)
        var ours: SecretBytes?
        let ourTime = try fastest(5) { ours = try PassphraseKDF.defaultPBKDF2.derive(secret, salt: salt, limits: .production) }
        let script = """
            import sys, time
            from cryptography.hazmat.primitives import hashes
            from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
            salt = bytes.fromhex(sys.argv[1]); best = 1e9; out = b""
            for _ in range(5):
                t = time.perf_counter()
                out = PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=salt, iterations=600000).derive(b"\(password)")
                best = min(best, time.perf_counter() - t)
            print(best, out.hex())
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, salt.map { String(format: "%02x", $0) }.joined()]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: " ")
        process.waitUntilExit()
        report("PBKDF2-HMAC-SHA256 600k (Coffer)", milliseconds(ourTime))
        guard output.count == 2, let theirTime = Double(output[0]) else {
            report("PBKDF2-HMAC-SHA256 600k (OpenSSL via cryptography)", "unavailable (pip install cryptography)")
            return
        }
        let same = output[1].trimmingCharacters(in: .whitespacesAndNewlines) == ours.map { $0.bytes.map { String(format: "%02x", $0) }.joined() }
        report("PBKDF2-HMAC-SHA256 600k (OpenSSL via cryptography)", milliseconds(theirTime) + (same ? "" : "  OUTPUT DIFFERS"))
        report("  ratio Coffer / OpenSSL (target <= 1.05)", String(format: "%.3f", ourTime / theirTime))
    }

    /// Seal+open throughput through Coffer's box framing (item associated data included) and raw swift-crypto.
    func aead() throws {
        let key = SymmetricKey(size: .bits256)
        let aad = KeySchedule.itemAssociatedData(
            vaultID: SystemRandom().bytes(16), itemID: SystemRandom().bytes(16), kind: "card", revision: 1,
            updatedAt: 1, formatVersion: 1)
        for size in [1024, 1 << 20] {
            let message = Data(SystemRandom().bytes(size))
            let rounds = size == 1024 ? 20_000 : 200
            // Raw swift-crypto two ways: keeping the SealedBox in memory (an upper bound no store can reach), and
            // through its combined bytes (what storing a box needs). The three alternate so that frequency changes
            // and neighbours' load hit them alike; each keeps its best run.
            var framed = Double.infinity
            var rawInMemory = Double.infinity
            var rawStored = Double.infinity
            for _ in 0..<7 {
                framed = min(framed, try fastest(1) {
                    for _ in 0..<rounds {
                        let box = try Box.seal(message, key: key, associatedData: aad)
                        _ = try Box.open(box, key: key, associatedData: aad)
                    }
                })
                rawInMemory = min(rawInMemory, try fastest(1) {
                    for _ in 0..<rounds {
                        let box = try AES.GCM.seal(message, using: key, authenticating: aad)
                        _ = try AES.GCM.open(box, using: key, authenticating: aad)
                    }
                })
                rawStored = min(rawStored, try fastest(1) {
                    for _ in 0..<rounds {
                        let bytes = try AES.GCM.seal(message, using: key, authenticating: aad).combined!
                        _ = try AES.GCM.open(AES.GCM.SealedBox(combined: bytes), using: key, authenticating: aad)
                    }
                })
            }
            let megabytes = Double(size * rounds) / 1_048_576
            let label = size == 1024 ? "1 KiB" : "1 MiB"
            report("AES-256-GCM seal+open \(label): Coffer box", String(format: "%.0f MB/s", megabytes / framed))
            report("  raw swift-crypto, SealedBox in memory", String(format: "%.0f MB/s", megabytes / rawInMemory))
            report("  raw swift-crypto, through combined bytes", String(format: "%.0f MB/s", megabytes / rawStored))
            report("  framing / raw in memory (target >= 0.90)", String(format: "%.3f", rawInMemory / framed))
            report("  framing / raw through bytes", String(format: "%.3f", rawStored / framed))
        }
    }

    func vault() throws {
        let root = NSTemporaryDirectory() + "coffer-bench-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = root + "/vault"
        let deviceKey = SecretBytes(randomCount: 32)
        let vault = try Vault.create(in: directory, deviceKey: deviceKey, passphrase: "bench passphrase")
        let contents = try (0..<itemCount).map { index -> ItemContent in
            switch index % 4 {
            case 0:
                return .card(try Card(name: "Card \(index)", symbology: .code128, payload: Array("4000\(index)".utf8), tags: ["bench"], networkIDs: ["costco"]))
            case 1:
                return .otp(try OTPItem(issuer: "Issuer \(index)", account: "user\(index)@example.com", parameters: try OTPParameters(secret: SystemRandom().bytes(20))))
            case 2:
                return .credential(try Credential(name: "Key \(index)", provider: "provider", value: "sk-\(UUID().uuidString)"))
            default:
                return .note(try Note(name: "Note \(index)", fields: [.init(label: "Email", value: "n\(index)@example.com")]))
            }
        }
        let addTime = try fastest(1) { _ = try vault.addAll(contents) }
        report("add \(itemCount) items (one transaction)", milliseconds(addTime))

        var unlocked: Vault?
        let unlockTime = try fastest(3) { unlocked = try Vault.open(in: directory, unlock: .deviceKey(deviceKey)) }
        var listed = 0
        let listTime = try fastest(5) { listed = try unlocked!.items().count }
        report("open vault (device key)", milliseconds(unlockTime))
        report("decrypt and list \(listed) items (target <= 150 ms)", milliseconds(listTime))
        let passphraseTime = try fastest(1) { try unlocked!.setPassphrase("another bench passphrase") }
        report("passphrase change (one PBKDF2 + re-wrap)", milliseconds(passphraseTime))
        let rotationTime = try fastest(1) {
            _ = try unlocked!.rotateMasterKey(deviceKey: deviceKey, passphrase: "another bench passphrase")
        }
        report("master-key rotation, \(itemCount) items (2 PBKDF2)", milliseconds(rotationTime))
    }
}
