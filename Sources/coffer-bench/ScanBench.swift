import ArgumentParser
import CofferBarcode
import CofferCrypto
import CofferImage
import CofferScan
import Foundation

/// The barcode reader on a set of camera-like photos (Tests/oracles/scan_photos.py, deterministic by seed), with
/// zxing-cpp run over the same files in the same run: success and wrong reads per symbology and tier, the median time
/// per image, and the median for 1280×720 frames (issue #28's goals: ≥ 0.95× zxing-cpp's success per symbology,
/// ≥ 99% on clean renders, ≤ 15 ms a 1280×720 frame).
struct ScanBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan", abstract: "The barcode reader against zxing-cpp on generated camera-like photos.")

    @Option(help: "Where the photo set is (made there by scan_photos.py when it has no manifest).")
    var set = "/tmp/coffer-scanset"
    @Option(help: "Photos per symbology and tier when the set is made.") var per = 40
    @Option(help: "Seed of a set that is made.") var seed = 1
    @Option(help: "Only these symbologies (comma-separated).") var symbologies: String?
    @OptionGroup var smoke: SmokeOption

    func run() throws {
        guard smoke.smoke else { return try measure(set: set, per: per) }
        // A set of its own, one photo per symbology and tier, so that a cached full set is neither used nor spoiled.
        let directory = try temporaryDirectory("scan")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try measure(set: directory, per: 1)
    }

    private func measure(set: String, per: Int) throws {
        let manifestPath = (set as NSString).appendingPathComponent("manifest.json")
        let script = "Tests/oracles/scan_photos.py"
        guard FileManager.default.fileExists(atPath: script) else {
            throw ValidationError("run coffer-bench scan from the repository's root (it uses \(script))")
        }
        if !FileManager.default.fileExists(atPath: manifestPath) {
            print("Making the photo set in \(set) (\(per) per symbology and tier, seed \(seed))…")
            try python([script, "--out", set, "--per", "\(per)", "--seed", "\(seed)", "--no-zxing"])
        }
        print("zxing-cpp over the set…")
        try python([script, "--out", set, "--anchor-only"])
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: manifestPath)))
        let wanted = symbologies.map { Set($0.split(separator: ",").map(String.init)) }

        print("Coffer over the set…")
        var cells: [String: Cell] = [:]
        var frameTimes: [Double] = []
        var fullFrameTimes: [Double] = []
        for entry in manifest.images where wanted?.contains(entry.symbology) ?? true {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: (set as NSString).appendingPathComponent(entry.file))))
            let image = try ImageFile.decode(bytes)
            let started = DispatchTime.now().uptimeNanoseconds
            let found = BarcodeReader.read(image)
            let ms = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
            if entry.tier != "clean", image.width == 1280, image.height == 720 {
                // As the camera reads a frame: done at the first symbol.
                let frameStarted = DispatchTime.now().uptimeNanoseconds
                _ = BarcodeReader.scan(image, firstOnly: true)
                frameTimes.append(Double(DispatchTime.now().uptimeNanoseconds - frameStarted) / 1e6)
                fullFrameTimes.append(ms)
            }
            let expected = Hex.decode(entry.payload_hex) ?? []
            let right = found.filter { Self.same($0.symbology.rawValue, entry.symbology) && $0.payload == expected }
            var cell = cells["\(entry.symbology)/\(entry.tier)"] ?? Cell()
            cell.images += 1
            cell.coffer.correct += right.isEmpty ? 0 : 1
            cell.coffer.wrong += found.count - right.count
            cell.coffer.times.append(ms)
            cell.zxing.correct += entry.zxing?.reads.contains { $0.correct } == true ? 1 : 0
            cell.zxing.wrong += entry.zxing?.reads.filter { !$0.correct }.count ?? 0
            cell.zxing.times.append(entry.zxing?.ms ?? 0)
            cells["\(entry.symbology)/\(entry.tier)"] = cell
        }
        report(cells, tiers: ["clean", "photo", "hard"], frameTimes: frameTimes, fullFrameTimes: fullFrameTimes)
    }

    /// Coffer's name and the manifest's for one symbology (a 14-digit ITF with its check digit is ITF-14 to Coffer).
    private static func same(_ coffer: String, _ manifest: String) -> Bool {
        coffer == manifest || (coffer == "itf14" && manifest == "itf")
    }

    private func report(_ cells: [String: Cell], tiers: [String], frameTimes: [Double], fullFrameTimes: [Double]) {
        let names = Array(Set(cells.keys.map { String($0.split(separator: "/")[0]) })).sorted()
        print("")
        print("correct/images (wrong) median ms — Coffer | zxing-cpp")
        print(
            "symbology".padding(toLength: 16, withPad: " ", startingAt: 0)
                + tiers.map { $0.padding(toLength: 40, withPad: " ", startingAt: 0) }.joined())
        var totals: [String: Cell] = [:]
        for name in names {
            var line = name.padding(toLength: 16, withPad: " ", startingAt: 0)
            for tier in tiers {
                guard let cell = cells["\(name)/\(tier)"] else {
                    line += String(repeating: " ", count: 40)
                    continue
                }
                totals[tier, default: Cell()].add(cell)
                line += cell.text.padding(toLength: 40, withPad: " ", startingAt: 0)
            }
            print(line)
        }
        var line = "all".padding(toLength: 16, withPad: " ", startingAt: 0)
        for tier in tiers { line += (totals[tier]?.text ?? "").padding(toLength: 40, withPad: " ", startingAt: 0) }
        print(line)
        if !frameTimes.isEmpty {
            print(
                String(
                    format: "1280×720 photos (%d): Coffer median %.1f ms as a camera frame (first symbol), %.1f ms for every symbol",
                    frameTimes.count, median(frameTimes), median(fullFrameTimes)))
        }
    }

    private func python(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ValidationError("\(arguments[0]) failed (exit \(process.terminationStatus))") }
    }

    struct Manifest: Decodable {
        struct Entry: Decodable {
            struct Anchor: Decodable {
                struct Read: Decodable { let correct: Bool }
                let reads: [Read]
                let ms: Double
            }
            let file: String
            let tier: String
            let symbology: String
            let payload_hex: String
            let zxing: Anchor?
        }
        let images: [Entry]
    }

    struct Tally {
        var correct = 0
        var wrong = 0
        var times: [Double] = []
    }

    struct Cell {
        var images = 0
        var coffer = Tally()
        var zxing = Tally()

        mutating func add(_ other: Cell) {
            images += other.images
            coffer.correct += other.coffer.correct
            coffer.wrong += other.coffer.wrong
            coffer.times += other.coffer.times
            zxing.correct += other.zxing.correct
            zxing.wrong += other.zxing.wrong
            zxing.times += other.zxing.times
        }

        var text: String {
            String(
                format: "%d/%d (%d) %.1f | %d (%d) %.1f", coffer.correct, images, coffer.wrong, median(coffer.times),
                zxing.correct, zxing.wrong, median(zxing.times))
        }
    }
}

private func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}
