import CofferCrypto
import CofferKit
import CofferPlatform
import CofferVault
import Crypto
import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    print(column(label) + value)
}

/// `label` padded to the value column; a longer one is kept whole, two spaces before its value.
func column(_ label: String) -> String {
    label.count < 52 ? label.padding(toLength: 52, withPad: " ", startingAt: 0) : label + "  "
}

func milliseconds(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }

struct VaultBench {
    let itemCount: Int
    /// `--smoke`: every measurement once, the AEAD rounds a hundredth.
    let smoke: Bool

    /// How many times a measurement repeats (the best run is kept): once in a smoke run.
    private func repetitions(_ full: Int) -> Int { smoke ? 1 : full }

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
        let ourTime = try fastest(repetitions(5)) { ours = try PassphraseKDF.defaultPBKDF2.derive(secret, salt: salt, limits: .production) }
        let script = """
            import sys, time
            from cryptography.hazmat.primitives import hashes
            from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
            salt = bytes.fromhex(sys.argv[1]); best = 1e9; out = b""
            for _ in range(\(repetitions(5))):
                t = time.perf_counter()
                out = PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=salt, iterations=600000).derive(b"\(password)")
                best = min(best, time.perf_counter() - t)
            print(best, out.hex())
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, Hex.encode(salt)]
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
        let same = output[1].trimmingCharacters(in: .whitespacesAndNewlines) == ours.map { Hex.encode($0.bytes) }
        report("PBKDF2-HMAC-SHA256 600k (OpenSSL via cryptography)", milliseconds(theirTime) + (same ? "" : "  OUTPUT DIFFERS"))
        report("  ratio Coffer / OpenSSL (target <= 1.05)", String(format: "%.3f", ourTime / theirTime))
    }

    /// Seal+open throughput through Coffer's box framing (item associated data included) with the key prepared once,
    /// as the vault keeps its items key, and with a key prepared for each box; and raw swift-crypto.
    func aead() throws {
        let key = SymmetricKey(size: .bits256)
        let prepared = try BoxKey(key)
        let aad = KeySchedule.itemAssociatedData(
            vaultID: SystemRandom().bytes(16), itemID: SystemRandom().bytes(16), kind: "card", revision: 1,
            updatedAt: 1, formatVersion: 1)
        for size in [1024, 1 << 20] {
            let message = Data(SystemRandom().bytes(size))
            let rounds = (size == 1024 ? 20_000 : 200) / (smoke ? 100 : 1)
            // Raw swift-crypto two ways: keeping the SealedBox in memory (an upper bound no store can reach), and
            // through its combined bytes (what storing a box needs). The three alternate so that frequency changes
            // and neighbours' load hit them alike; each keeps its best run.
            var framed = Double.infinity
            var oneOff = Double.infinity
            var rawInMemory = Double.infinity
            var rawStored = Double.infinity
            for _ in 0..<repetitions(7) {
                framed = min(
                    framed,
                    try fastest(1) {
                        for _ in 0..<rounds {
                            let box = try Box.seal(message, key: prepared, associatedData: aad)
                            _ = try Box.open(box, key: prepared, associatedData: aad)
                        }
                    })
                oneOff = min(
                    oneOff,
                    try fastest(1) {
                        for _ in 0..<rounds {
                            let box = try Box.seal(message, key: key, associatedData: aad)
                            _ = try Box.open(box, key: key, associatedData: aad)
                        }
                    })
                rawInMemory = min(
                    rawInMemory,
                    try fastest(1) {
                        for _ in 0..<rounds {
                            let box = try AES.GCM.seal(message, using: key, authenticating: aad)
                            _ = try AES.GCM.open(box, using: key, authenticating: aad)
                        }
                    })
                rawStored = min(
                    rawStored,
                    try fastest(1) {
                        for _ in 0..<rounds {
                            let bytes = try AES.GCM.seal(message, using: key, authenticating: aad).combined!
                            _ = try AES.GCM.open(AES.GCM.SealedBox(combined: bytes), using: key, authenticating: aad)
                        }
                    })
            }
            let megabytes = Double(size * rounds) / 1_048_576
            let label = size == 1024 ? "1 KiB" : "1 MiB"
            report("AES-256-GCM seal+open \(label): Coffer box", String(format: "%.0f MB/s", megabytes / framed))
            if let openssl = try openSSLSealOpen(size: size, rounds: rounds, aad: aad) {
                let goal = size == 1024 ? "0.90" : "0.80"
                report("  OpenSSL via Python cryptography", String(format: "%.0f MB/s", megabytes / openssl))
                report("  Coffer box / OpenSSL (goal >= \(goal))", String(format: "%.2f", openssl / framed))
            } else {
                report("  OpenSSL", "unavailable (pip install cryptography)")
            }
            report("  Coffer box, key prepared for each box", String(format: "%.0f MB/s", megabytes / oneOff))
            report("  raw swift-crypto, SealedBox in memory", String(format: "%.0f MB/s", megabytes / rawInMemory))
            report("  raw swift-crypto, through combined bytes", String(format: "%.0f MB/s", megabytes / rawStored))
            report("  Coffer box / raw swift-crypto in memory", String(format: "%.2f", rawInMemory / framed))
        }
    }

    /// The best time of OpenSSL's AES-256-GCM (through Python's cryptography, whose call overhead it includes) for
    /// `rounds` seal+open pairs of `size` bytes with a fresh nonce each, as a Coffer box has; nil without Python's
    /// cryptography. Python runs with the allocator settings Coffer's processes use (`AllocatorTuning`): with glibc's
    /// defaults its 1 MiB figure swings between a quarter and all of the cipher's rate with the heap's state.
    private func openSSLSealOpen(size: Int, rounds: Int, aad: [UInt8]) throws -> Double? {
        let script = """
            import os, sys, time
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
            size, rounds, runs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
            aad = bytes.fromhex(sys.argv[4]); key = AESGCM(os.urandom(32)); message = os.urandom(size); best = 1e9
            for _ in range(runs):
                start = time.perf_counter()
                for _ in range(rounds):
                    nonce = os.urandom(12)
                    key.decrypt(nonce, key.encrypt(nonce, message, aad), aad)
                best = min(best, time.perf_counter() - start)
            print(best)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, String(size), String(rounds), String(repetitions(7)), Hex.encode(aad)]
        var environment = ProcessInfo.processInfo.environment
        environment["GLIBC_TUNABLES"] =
            "glibc.malloc.mmap_threshold=\(AllocatorTuning.mmapThreshold):glibc.malloc.trim_threshold=\(AllocatorTuning.trimThreshold)"
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return Double(output.trimmingCharacters(in: .whitespacesAndNewlines))
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
                return .otp(
                    try OTPItem(issuer: "Issuer \(index)", account: "user\(index)@example.com", parameters: try OTPParameters(secret: SystemRandom().bytes(20)))
                )
            case 2:
                return .credential(try Credential(name: "Key \(index)", provider: "provider", value: "sk-\(UUID().uuidString)"))
            default:
                return .note(try Note(name: "Note \(index)", fields: [.init(label: "Email", value: "n\(index)@example.com")]))
            }
        }
        let addTime = try fastest(1) { _ = try vault.addAll(contents) }
        report("add \(itemCount) items (one transaction)", milliseconds(addTime))

        var unlocked: Vault?
        let unlockTime = try fastest(repetitions(3)) { unlocked = try Vault.open(in: directory, unlock: .deviceKey(deviceKey)) }
        var listed = 0
        let listTime = try fastest(repetitions(5)) { listed = try unlocked!.items().count }
        report("open vault (device key)", milliseconds(unlockTime))
        report("decrypt and list \(listed) items (target <= 150 ms)", milliseconds(listTime))
        // The floor underneath: SQLite handing over the same rows and AES-GCM opening each box, nothing else.
        let database = try DatabaseQueue(path: Vault.databasePath(in: directory))
        let itemsKey = KeySchedule.itemsKey(masterKey: SecretBytes(randomCount: 32), vaultID: [UInt8](repeating: 0, count: 16))
        let floorTime = try fastest(repetitions(5)) {
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
    /// `--smoke`: each rate measured once for a fiftieth of a second, each process run once.
    let smoke: Bool

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
        for _ in 0..<(smoke ? 1 : 3) {
            var count = 0
            let start = DispatchTime.now().uptimeNanoseconds
            var elapsed = 0.0
            while elapsed < (smoke ? 0.02 : 0.5) {
                for _ in 0..<20 { try body() }
                count += 20
                elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            }
            best = max(best, Double(count) / elapsed)
        }
        report("\(label)", String(format: "%.0f symbols/s", best))
    }

    /// Whole processes writing a QR PNG, as a user runs them: `coffer barcode` with the payload on stdin (from a
    /// file, like `< payload`), qrencode and zint with it as an argument; the same payload, level M, 4 pixels per
    /// module and a 4-module quiet zone (164 × 164 pixels) for all three. Like hyperfine: warm-up runs, then `runs`
    /// runs per tool interleaved round by round so that neighbours' load hits each alike; the median of each is
    /// reported, with the median CPU time (user + system, from wait4), which load on the machine disturbs less.
    func processes() throws {
        let payload = "https://example.com/card/1234567890?member=Jane+Doe"
        let directory = NSTemporaryDirectory() + "coffer-bench-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let inputPath = directory + "/payload"
        try Data(payload.utf8).write(to: URL(fileURLWithPath: inputPath))
        let coffer = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("coffer").path
        let cofferArguments = ["barcode", "--symbology", "qr", "--ec", "M", "--scale", "4", "--png", directory + "/c.png", "--force"]
        let tools: [ProcessTool] = [
            ProcessTool(label: "coffer barcode --png", executable: coffer, arguments: cofferArguments, input: inputPath),
            ProcessTool(
                label: "qrencode -o", executable: "/usr/bin/qrencode",
                arguments: ["-l", "M", "-s", "4", "-m", "4", "-o", directory + "/q.png", payload]),
            ProcessTool(
                label: "zint -b 58 (QR)", executable: "/usr/bin/zint",
                arguments: ["-b", "58", "--secure=2", "--scale=2", "--quietzones", "-o", directory + "/z.png", "-d", payload]),
            // For scale: the same coffer run through ArgumentParser's full command tree.
            ProcessTool(
                label: "coffer, without the fast path", executable: coffer, arguments: cofferArguments, input: inputPath,
                environment: ["COFFER_NO_FAST_PATH=1"]),
        ]
        for tool in tools where !FileManager.default.isExecutableFile(atPath: tool.executable) {
            report(tool.label, "not installed (apt-get install -y qrencode zint)")
            return
        }
        let (warmup, runs) = smoke ? (0, 1) : (5, 60)
        var wall = [[Double]](repeating: [], count: tools.count)
        var cpu = [[Double]](repeating: [], count: tools.count)
        for round in 0..<(warmup + runs) {
            for (index, tool) in tools.enumerated() {
                let (seconds, cpuSeconds) = try tool.time()
                if round >= warmup {
                    wall[index].append(seconds)
                    cpu[index].append(cpuSeconds)
                }
            }
        }
        let wallMedian = wall.map(median)
        let cpuMedian = cpu.map(median)
        print("QR PNG, whole process (median of \(runs) after \(warmup) warm-up runs; wall, CPU = user + system):")
        for (index, tool) in tools.enumerated() {
            report("  \(tool.label)", String(format: "%.2f ms, CPU %.2f ms", wallMedian[index] * 1000, cpuMedian[index] * 1000))
        }
        for (index, name) in [(1, "qrencode"), (2, "zint")] {
            report(
                "  coffer / \(name) (target <= 1.0)",
                String(format: "wall %.2f, CPU %.2f", wallMedian[0] / wallMedian[index], cpuMedian[0] / cpuMedian[index]))
        }
    }

    func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

/// One command line to time as a whole process.
struct ProcessTool {
    let label: String
    let executable: String
    let arguments: [String]
    /// File given as standard input (otherwise /dev/null).
    var input: String? = nil
    /// Added to this process's environment.
    var environment: [String] = []
    /// File that takes standard error (otherwise this process's).
    var errorOutput: String? = nil

    /// Wall time from spawn to exit, and the child's CPU time. posix_spawn and wait4 directly: Foundation's
    /// Process adds tens of milliseconds of its own on Linux.
    func time() throws -> (wall: Double, cpu: Double) {
        let run = try measure()
        return (run.wall, run.cpu)
    }

    /// As `time()`, with the child's peak resident set size in bytes.
    func measure() throws -> (wall: Double, cpu: Double, peakRSS: Int) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        if let errorOutput { posix_spawn_file_actions_addopen(&actions, 2, errorOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o600) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // An added variable replaces the inherited one (getenv takes the first of two).
        let added = Set(environment.map { String($0.prefix { $0 != "=" }) })
        let inherited = ProcessInfo.processInfo.environment.filter { !added.contains($0.key) }.map { "\($0.key)=\($0.value)" }
        let envp = (inherited + environment).map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let start = DispatchTime.now().uptimeNanoseconds
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard spawned == 0 else { throw BenchError("\(label): cannot start \(executable) (errno \(spawned))") }
        var status: Int32 = 0
        var usage = rusage()
        wait4(pid, &status, 0, &usage)
        let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        guard status == 0 else {
            // wait4's status: the exit code in bits 8–15 when the low 7 bits (the terminating signal) are 0.
            let signal = status & 0x7F
            throw BenchError(signal == 0 ? "\(label): exit status \((status >> 8) & 0xFF)" : "\(label): killed by signal \(signal)")
        }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return (wall, seconds(usage.ru_utime) + seconds(usage.ru_stime), usage.ru_maxrss * 1024)
    }
}
