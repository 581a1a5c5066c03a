import CofferKit
import Crypto
import Foundation
import GRDB

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
        case "barcode":
            try BarcodeBench().run()
        default:
            FileHandle.standardError.write(Data("usage: coffer-bench vault [ITEMS] | coffer-bench barcode\n".utf8))
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
        // The floor underneath: SQLite handing over the same rows and AES-GCM opening each box, nothing else.
        let database = try DatabaseQueue(path: Vault.databasePath(in: directory))
        let itemsKey = KeySchedule.itemsKey(masterKey: SecretBytes(randomCount: 32), vaultID: [UInt8](repeating: 0, count: 16))
        let floorTime = try fastest(5) {
            try database.read { db in
                let boxes = try Data.fetchAll(db, sql: "SELECT box FROM item WHERE deleted = 0")
                for box in boxes {
                    let sealed = try box.withUnsafeBytes { try AES.GCM.SealedBox(combined: $0) }
                    _ = try? AES.GCM.open(sealed, using: itemsKey)
                }
            }
        }
        report("  floor: SQLite rows + AES-GCM open, same items", milliseconds(floorTime))
        report("  list / floor", String(format: "%.2f", listTime / floorTime))
        let passphraseTime = try fastest(1) { try unlocked!.setPassphrase("another bench passphrase") }
        report("passphrase change (one PBKDF2 + re-wrap)", milliseconds(passphraseTime))
        let rotationTime = try fastest(1) {
            _ = try unlocked!.rotateMasterKey(deviceKey: deviceKey, passphrase: "another bench passphrase")
        }
        report("master-key rotation, \(itemCount) items (2 PBKDF2)", milliseconds(rotationTime))
    }
}

/// Barcode speed: symbols per second in-process, and whole processes writing a QR PNG against qrencode and zint.
struct BarcodeBench {
    func run() throws {
        print("coffer-bench barcode")
        var random = SystemRandomNumberGenerator()
        let qrPayload = (0..<200).map { _ in UInt8.random(in: 0...255, using: &random) }
        let qrOptions = BarcodeOptions(qrErrorCorrection: .M, qrMinimumVersion: 10, charset: .iso8859_1)
        let first = try CofferBarcode.encode(qrPayload, as: .qr, options: qrOptions)
        let version = first.qr.map { "v\($0.version)-\($0.errorCorrection.rawValue), byte mode" } ?? "?"
        try rate("QR (\(version), 200 bytes)") { _ = try CofferBarcode.encode(qrPayload, as: .qr, options: qrOptions) }
        let pdfPayload = Array("MEMBER:0042;NAME:Jane Doe;CLUB:Riverside Library;SINCE:2019-04-01;TIER:GOLD;ID:77812".utf8)
        try rate("PDF417 (86 characters)") { _ = try CofferBarcode.encode(pdfPayload, as: .pdf417) }
        let code128Payload = Array("98765432-ABC-001".utf8)
        try rate("Code 128 (16 characters)") { _ = try CofferBarcode.encode(code128Payload, as: .code128) }
        try processes()
    }

    func rate(_ label: String, _ body: () throws -> Void) throws {
        var best = 0.0
        for _ in 0..<3 {
            var count = 0
            let start = DispatchTime.now().uptimeNanoseconds
            var elapsed = 0.0
            while elapsed < 0.5 {
                for _ in 0..<20 { try body() }
                count += 20
                elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            }
            best = max(best, Double(count) / elapsed)
        }
        report("\(label)", String(format: "%.0f symbols/s", best))
    }

    /// Runs each tool `rounds` times, interleaved, and reports the mean wall time of one process.
    func processes() throws {
        let payload = "https://example.com/card/1234567890?member=Jane+Doe"
        let directory = NSTemporaryDirectory() + "coffer-bench-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let coffer = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("coffer").path
        let tools: [(String, String, [String], String?)] = [
            ("coffer barcode --png", coffer, ["barcode", "--symbology", "qr", "--png", directory + "/c.png"], payload),
            ("qrencode -o", "/usr/bin/qrencode", ["-o", directory + "/q.png", payload], nil),
            ("zint (QR)", "/usr/bin/zint", ["-b", "58", "-o", directory + "/z.png", "-d", payload], nil),
        ]
        var totals = [Double](repeating: 0, count: tools.count)
        let rounds = 40
        for round in 0..<(rounds + 2) {
            for (index, tool) in tools.enumerated() {
                guard FileManager.default.isExecutableFile(atPath: tool.1) else {
                    report(tool.0, "not installed")
                    return
                }
                let seconds = try time(tool.1, tool.2, input: tool.3)
                if round >= 2 { totals[index] += seconds }
            }
        }
        for (index, tool) in tools.enumerated() {
            report("QR PNG, whole process: \(tool.0)", milliseconds(totals[index] / Double(rounds)))
        }
        report("  coffer / qrencode (target <= 1.0)", String(format: "%.2f", totals[0] / totals[1]))
        report("  coffer / zint (target <= 1.0)", String(format: "%.2f", totals[0] / totals[2]))
    }

    /// Wall time of one process from spawn to exit, with `input` (if any) already waiting in a file on its stdin.
    /// posix_spawn and waitpid directly: Foundation's Process adds tens of milliseconds of its own on Linux.
    func time(_ executable: String, _ arguments: [String], input: String?) throws -> Double {
        let inputPath = NSTemporaryDirectory() + "coffer-bench-input"
        try Data((input ?? "").utf8).write(to: URL(fileURLWithPath: inputPath))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inputPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let start = DispatchTime.now().uptimeNanoseconds
        guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else {
            throw CocoaError(.executableLoad)
        }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
